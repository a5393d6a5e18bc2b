"""Isolation: two processes, a sandboxed child per probe, nothing left behind (SESSION-ISOLATION-1..9).

The capability is the session's whole authority, so one process holds it: the capability
process, forked before any secret exists, the only one that talks to the network. The monitor
that the platform started holds no secret, keeps the deadline, and cleans up whatever the
capability process leaves. Each probe is answered from content nobody vouches for, in a child
with no network, no new process, no environment and a ceiling of its own (D30). These checks
read what the platform can see of that from outside: /proc of every process (status, stat,
fds, limits, environ, cwd, and the monitor's memory, as root), and who holds each socket the
fakes accepted.
"""

import json
import os
import signal
import subprocess
import time

from conformance.checks import check
from conformance.checks.session._common import (PHASE_TIMEOUT_S, SCHEDULE_SLACK_S, STOP_BUDGET_S, capability_pid,
                                                describe_run, expect_summary, faults, node_program, proc_alive,
                                                proc_field, runs_node)
from conformance.planes.session import plane as plane_module
from conformance.runner import descendants, read_cmdline, read_environ
from conformance.timeouts import POLL_INTERVAL_S, SHORT_TIMEOUT_S, Deadline

# SESSION-ISOLATION-5: the probe child's limits (the policy's), as /proc/<pid>/limits names them.
ADDRESS_SPACE_BYTES = 536870912
OPEN_FILES = 16
# SESSION-ISOLATION-3, -4: no descendant alive this long after the monitor or the capability
# process died.
ORPHAN_BUDGET_S = STOP_BUDGET_S
# isolation.ceiling: the probe timeout the node is given (a whole second, so the policy's
# cpu_seconds is exact), and the heartbeats expected while the frozen child holds the probe.
CEILING_S = 2
MIN_BEATS_DURING_CEILING = 3
# isolation.ceiling: how early the failure may come against the harness's freeze (the node starts
# its ceiling as it hands the child its input, a moment before the harness finds and freezes it).
CEILING_EARLY_S = 0.5
# The probe-child flag of the command line (SESSION-ARGV-1).
PROBE_CHILD_FLAG = "--probe-child"
# SESSION-ISOLATION-7: the failure codes a probe child may write.
CHILD_CODES = ("PROBE_COLUMN_UNKNOWN", "PROBE_AGGREGATE_NOT_NUMERIC", "PROBE_PARSE_EMPTY", "PROBE_FAILED")
# isolation.warm-pool: the pool size configured (the contract's default), and how long the fake
# holds attempt:start's answer while the harness reads /proc (a loaded machine reads it in well
# under a second).
WARM_POOL = 2
START_HOLD_S = 2.5
# How long the harness waits for the node to exit after its stop.
AFTER_STOP_TIMEOUT_S = 15.0
# /proc/<pid>/mem is read in pieces of this size.
MEM_CHUNK_BYTES = 1 << 20


def _stop(plane):
    plane.signal(signal.SIGTERM)
    return plane.wait(timeout=AFTER_STOP_TIMEOUT_S)


def _stat_ids(pid):
    """(pgrp, session) of pid from /proc/<pid>/stat, or None."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return int(fields[2]), int(fields[3])
    except (OSError, ValueError, IndexError):
        return None


def _socket_inodes(pid):
    """The inodes of the sockets pid holds, from /proc/<pid>/fd."""
    found = set()
    try:
        names = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return found
    for name in names:
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, name))
        except OSError:
            continue
        if target.startswith("socket:["):
            found.add(int(target[8:-1]))
    return found


def _client_inodes(ports):
    """Inodes of the TCP sockets connected to any of ports (the fakes' listeners)."""
    found = set()
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as handle:
                lines = handle.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and int(fields[2].rsplit(":", 1)[1], 16) in ports:
                found.add(int(fields[9]))
    return found - {0}


def _probe_children(pid):
    """Descendants of pid whose argv ends with the probe-child flag."""
    return [kid for kid in descendants(pid) if (read_cmdline(kid) or [])[-1:] == [PROBE_CHILD_FLAG]]


def _wait(ctx, condition, what, diagnosis, timeout=PHASE_TIMEOUT_S):
    """Poll until condition() holds; the check fails with `diagnosis` (what the node
    most likely does not do) when it does not within timeout."""
    deadline = Deadline(timeout)
    while not condition():
        if deadline.over():
            ctx.fail(expected=what, actual="not within %.0f s" % timeout, diagnosis=diagnosis)
        time.sleep(POLL_INTERVAL_S)


@check("isolation.processes", clauses=["SESSION-ISOLATION-1"], level="MUST",
       title="the monitor forks one capability process, in a session of its own, which alone holds connections",
       fakes="a healthy plane; the first claim is accepted and never answered, while the harness reads /proc",
       expected="the monitor has one child; its session and process group are its own pid; the held claim's "
                "connection belongs to it, and the monitor holds no connection to any fake")
def _(ctx):
    plane = ctx.plane()
    plane.control.add_fault(faults.hang(), plane.control.claim_match(first=1))
    plane.start()
    plane.wait_claims(1)
    pid = capability_pid(ctx, plane)
    ids = _stat_ids(pid)
    ports = {getattr(fake, "server", fake).port for fake in (plane.control, plane.metadata, plane.store,
                                                              plane.tripwire)}
    connected = _client_inodes(ports)
    monitor, child = _socket_inodes(plane.proc.host_pid) & connected, _socket_inodes(pid) & connected
    _stop(plane)
    ctx.expect(ids == (pid, pid), expected="the capability process leads its own session and process group",
               actual="pid %d, process group and session %s" % (pid, ids),
               diagnosis="the capability process calls setsid() before any request or child (SESSION-ISOLATION-1)")
    ctx.expect(not monitor, expected="the monitor holds no connection to any fake",
               actual="%d connection(s)" % len(monitor),
               diagnosis="every request of the session comes from the capability process")
    ctx.expect(bool(child), expected="the held claim's connection held by the capability process",
               actual="it holds none of the %d connection(s) to the fakes" % len(connected),
               diagnosis="make every request of the session from the capability process, the monitor's one child")


def _memory_holds(pid, needles):
    """The needles found in the readable, private memory of pid (/proc/<pid>/maps and mem)."""
    found = set()
    with open("/proc/%d/maps" % pid) as maps, open("/proc/%d/mem" % pid, "rb", 0) as mem:
        for line in maps:
            fields = line.split()
            if len(fields) < 2 or not fields[1].startswith("r"):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            carry = b""
            for offset in range(start, end, MEM_CHUNK_BYTES):
                try:
                    mem.seek(offset)
                    chunk = carry + mem.read(min(MEM_CHUNK_BYTES, end - offset))
                except (OSError, ValueError, OverflowError):
                    break
                for needle in needles:
                    if needle in chunk:
                        found.add(needle)
                carry = chunk[-256:]
    return found


@check("isolation.monitor-memory", clauses=["SESSION-ISOLATION-2"], level="MUST",
       title="the monitor's memory holds neither the capability nor the identity token",
       fakes="a healthy plane; one probe; once its report is answered the harness reads /proc/<monitor>/mem",
       expected="neither the capability nor the identity token anywhere in the monitor's readable memory")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(rows=[["a", 1]])
    probe_id = plane.probe("source_inspect", source)
    plane.start()
    plane.wait_report(probe_id)
    plane.wait_claims(len(plane.control.claims()) + 1)
    secrets = [plane.control.capability] + [t.token for t in plane.metadata.tokens()]
    try:
        found = _memory_holds(plane.proc.host_pid, [s.encode("ascii") for s in secrets])
    except OSError as exc:
        _stop(plane)
        ctx.skip("the harness may not read the monitor's memory here (%s)" % exc)
    _stop(plane)
    ctx.expect(not found, expected="no secret in the monitor's memory",
               actual="%s found there" % ", ".join(sorted(plane.describe_secret(s.decode()) for s in found)),
               diagnosis="the monitor learns only the session id, the expiry and the summary: the capability "
                         "process never sends it a secret (SESSION-ISOLATION-2)")


@check("isolation.orphans", clauses=["SESSION-ISOLATION-3"], level="MUST",
       title="a SIGKILL of the monitor takes the capability process and its probe children along",
       fakes="the node is not PID 1 (a namespace's end would kill everything); one probe whose acquisition stays "
             "pending; the harness SIGKILLs the monitor",
       expected="no descendant of the node alive 1 s after the monitor's death")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(rows=[["a", 1]], ready_after_reads=None)
    plane.probe("source_inspect", source)
    plane.start(pid1=False)
    plane.wait_for(plane.control.started("read", 1), "the first acquisition read")
    tree = descendants(plane.proc.host_pid)
    ctx.expect(len(tree) >= 2, expected="a capability process and a probe child before the kill",
               actual="%d descendant(s)" % len(tree),
               diagnosis="fork the capability process, and run each probe in a probe child of its own: the harness "
                         "found fewer processes")
    plane.signal(signal.SIGKILL)
    killed = time.monotonic()
    deadline = Deadline(ORPHAN_BUDGET_S + SCHEDULE_SLACK_S)
    while any(proc_alive(pid) for pid in tree) and not deadline.over():
        time.sleep(POLL_INTERVAL_S)
    alive = [pid for pid in tree if proc_alive(pid)]
    took = time.monotonic() - killed
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    plane.wait()
    ctx.expect(not alive, expected="every descendant gone within %.1f s of the monitor's death" % ORPHAN_BUDGET_S,
               actual="%d still alive %.1f s after it: %s" % (len(alive), took, ", ".join(
                   " ".join((read_cmdline(pid) or ["?"])[-1:]) for pid in alive)),
               diagnosis="the capability process and every probe child have SIGKILL as their parent-death signal "
                         "(SESSION-ISOLATION-3)")


@check("isolation.child-exit", clauses=["SESSION-ISOLATION-4"], level="MUST",
       title="the capability process killed during a probe: SESSION_CHILD_EXITED, exit 1, nothing left",
       fakes="one probe whose acquisition stays pending; the harness SIGKILLs the capability process",
       expected="exit 1 within 1 s; summary failure_code SESSION_CHILD_EXITED; no process of the node left")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(rows=[["a", 1]], ready_after_reads=None)
    plane.probe("source_inspect", source)
    plane.start()
    plane.wait_for(plane.control.started("read", 1), "the first acquisition read")
    pid = capability_pid(ctx, plane)
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    ctx.note("harness: SIGKILL to the capability process (pid %d)" % pid)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    took = plane.result.t_exit - killed
    ctx.expect(took <= ORPHAN_BUDGET_S + SCHEDULE_SLACK_S,
               expected="exit within %.1f s of the capability process's death" % ORPHAN_BUDGET_S,
               actual="%.2f s (%s)" % (took, describe_run(plane)),
               diagnosis="when the capability process dies, the monitor writes the summary SESSION_CHILD_EXITED and "
                         "exits 1 at once")
    expect_summary(ctx, plane, failure_code="SESSION_CHILD_EXITED")


def _limits(pid):
    """{name: soft limit text} of /proc/<pid>/limits."""
    found = {}
    with open("/proc/%d/limits" % pid) as handle:
        for line in handle.read().splitlines()[1:]:
            parts = line[:26].strip(), line[26:].split()
            if parts[1]:
                found[parts[0]] = parts[1][0]
    return found


@check("isolation.sandbox", clauses=["SESSION-ISOLATION-5"], level="MUST",
       title="a probe child waits in its sandbox: argv, no environment, fds 0-2, own session, /, limits, seccomp",
       fakes="a healthy plane (probe timeout 10 s); the harness reads /proc of the warm probe child once its "
             "filter is in place",
       expected="argv [python, -I, -S, node, --probe-child]; Seccomp 2, NoNewPrivs 1; empty environment; fds 0, 1, "
                "2 only; its own session; cwd /; RLIMIT_AS 512 MiB, CORE 0, NOFILE 16, CPU 11 s")
def _(ctx):
    plane = ctx.plane()
    plane.start()
    plane.wait_claims(1)
    children = []

    def sandboxed():
        children[:] = [kid for kid in _probe_children(plane.proc.host_pid) if proc_field(kid, "Seccomp") == "2"]
        return bool(children)
    _wait(ctx, sandboxed, "a warm probe child with its filter in place (pool size %d)" % plane_module.WARM_POOL_SIZE,
          "start the warm pool's probe children with the node's own file and --probe-child, and install their "
          "seccomp filter before they wait for input (SESSION-ISOLATION-5, -8)")
    pid = children[0]
    argv, environ, ids = read_cmdline(pid), read_environ(pid), _stat_ids(pid)
    fds, cwd, limits = sorted(int(fd) for fd in os.listdir("/proc/%d/fd" % pid)), os.readlink(
        "/proc/%d/cwd" % pid), _limits(pid)
    no_new_privs = proc_field(pid, "NoNewPrivs")
    # The node's own interpreter and file, read from its process: under --python or `-- python3.9 worker.py`
    # they are not this harness's.
    interpreter, script = node_program(ctx, plane)
    child_interpreter = os.path.realpath("/proc/%d/exe" % pid)
    runs = runs_node(argv, script, plane.runs[-1].scratch)  # before the stop removes the scratch directory
    _stop(plane)
    shape = len(argv) == 5 and argv[1:3] == ["-I", "-S"] and argv[4] == PROBE_CHILD_FLAG
    ctx.expect(shape and child_interpreter == interpreter and runs,
               expected="argv [the node's interpreter (%s), -I, -S, the node file (%s) or its bytecode (D54), "
                        "--probe-child]" % (interpreter, script or "?"),
               actual="argv %s, interpreter %s" % (argv, child_interpreter),
               diagnosis="start a probe child as [sys.executable, -I, -S, <node file or its D54 bytecode>, "
                         "--probe-child] and nothing else")
    ctx.expect(no_new_privs == "1", expected="NoNewPrivs: 1", actual="NoNewPrivs: %s" % no_new_privs,
               diagnosis="set no_new_privs in the probe child before its seccomp filter, so the filter cannot be "
                         "undone")
    ctx.expect(environ == {}, expected="an empty environment (no attestation is configured)",
               actual="%d variable(s): %s" % (len(environ or {}), ", ".join(sorted(environ or {})[:8])),
               diagnosis="a probe child gets nothing of the node's environment (SESSION-ISOLATION-5)")
    ctx.expect(fds == [0, 1, 2], expected="descriptors 0, 1 and 2 only", actual="descriptors %s" % fds,
               diagnosis="close every descriptor but 0, 1 and 2 before the probe child runs (close_fds, no pass_fds)")
    ctx.expect(ids == (pid, pid), expected="a session and process group of its own",
               actual="process group and session %s, pid %d" % (ids, pid),
               diagnosis="start the probe child in a session of its own (setsid), so its whole group can be killed")
    ctx.expect(cwd == "/", expected="working directory /", actual="working directory %s" % cwd,
               diagnosis="start the probe child in the working directory /")
    wanted = {"Max address space": str(ADDRESS_SPACE_BYTES), "Max core file size": "0",
              "Max open files": str(OPEN_FILES), "Max cpu time": str(plane_module.PROBE_TIMEOUT_S + 1)}
    got = dict((name, limits.get(name)) for name in wanted)
    ctx.expect(got == wanted, expected="limits %s" % wanted, actual="limits %s" % got,
               diagnosis="the policy's RLIMIT_AS, RLIMIT_CORE, RLIMIT_NOFILE and RLIMIT_CPU are set before any "
                         "input (SESSION-ISOLATION-5)")


@check("isolation.ceiling", clauses=["SESSION-ISOLATION-6"], level="MUST",
       title="a frozen probe child fails its probe at the ceiling, killed, while the heartbeat beats on",
       fakes="probe timeout 2 s, no warm pool; two probes; the harness SIGSTOPs the first probe's child",
       expected="the first probe reported failed SANDBOX_TIMEOUT about 2 s after the freeze, heartbeats meanwhile, "
                "its child gone; the second probe answered by another child")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(rows=[["a", 1], ["b", 2]])
    first, second = plane.probe("source_inspect", source), plane.probe("source_inspect", source)
    plane.start(env={"MR_SESSION_WORKER_WARM_POOL_SIZE": "0",
                     "MR_SESSION_WORKER_PROBE_TIMEOUT_SECONDS": str(CEILING_S)})
    children = []

    def child_running():
        children[:] = _probe_children(plane.proc.host_pid)
        return bool(children)
    _wait(ctx, child_running, "the first probe's child",
          "run each probe in a probe child started as [sys.executable, -I, -S, <node file>, --probe-child]")
    frozen = children[0]
    os.kill(frozen, signal.SIGSTOP)
    t_freeze = time.monotonic()
    ctx.note("harness: SIGSTOP to the probe child (pid %d)" % frozen)
    report = plane.wait_report(first, timeout=CEILING_S + PHASE_TIMEOUT_S)
    took = report.t - t_freeze
    gone = not proc_alive(frozen)
    second_report = plane.wait_report(second)
    pids = [kid for kid in _probe_children(plane.proc.host_pid)]
    plane.close_session()
    plane.wait()
    doc = report.doc or {}
    ctx.expect(doc.get("failure_code") == "SANDBOX_TIMEOUT",
               expected="the first probe reported failed SANDBOX_TIMEOUT",
               actual="outcome %s, failure_code %s" % (doc.get("outcome"), doc.get("failure_code")),
               diagnosis="a probe child past the probe timeout is killed and the probe reported failed SANDBOX_TIMEOUT")
    ctx.expect(CEILING_S - CEILING_EARLY_S <= took <= CEILING_S + SCHEDULE_SLACK_S,
               expected="the report %.0f s after the freeze (the probe timeout)" % CEILING_S,
               actual="%.2f s" % took, diagnosis="the child runs at most the probe timeout (SESSION-ISOLATION-6)")
    beats = [c for c in plane.control.heartbeats() if t_freeze <= c.t <= report.t]
    ctx.expect(len(beats) >= MIN_BEATS_DURING_CEILING,
               expected="heartbeats while the child is frozen (at least %d)" % MIN_BEATS_DURING_CEILING,
               actual="%d" % len(beats),
               diagnosis="keep the heartbeat on its schedule while a probe child is stuck: never wait for a child in a "
                         "way that blocks the beats")
    ctx.expect(gone, expected="the frozen child killed by the time its probe is reported",
               actual="pid %d still alive" % frozen, diagnosis="no probe child outlives its probe")
    ctx.expect((second_report.doc or {}).get("outcome") == "succeeded" and frozen not in pids,
               expected="the second probe answered, by another child", actual="outcome %s" % (
                   (second_report.doc or {}).get("outcome"),),
               diagnosis="after a child is killed at the ceiling, the next probe gets a fresh child and is answered")


@check("isolation.child-protocol", clauses=["SESSION-ISOLATION-7"], level="MUST",
       title="the node's --probe-child mode writes the failure line for an input it cannot read",
       fakes="no plane: the harness runs the node file with --probe-child, an empty environment and a header "
             "that is not a probe input",
       expected="exit 1; nothing on stdout; stderr exactly {\"code\":X,\"status\":\"failed\"} and a newline, X one of "
                "the four child codes")
def _(ctx):
    if ctx.node.path is None:
        ctx.skip("the node is a command (-- COMMAND): its probe child mode is run as its own file")
    for label, data in (("not JSON", b"not a probe input\n"), ("an empty input", b""),
                        ("another document", b'{"schema_version":"other"}\n')):
        proc = subprocess.run(ctx.node.argv + [PROBE_CHILD_FLAG], input=data, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env={}, cwd="/", timeout=SHORT_TIMEOUT_S)
        try:
            doc = json.loads(proc.stderr.decode("utf-8"))
        except ValueError:
            doc = None
        line = (json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n").encode() if doc is not None else None
        ctx.expect(proc.returncode == 1 and proc.stdout == b"" and line == proc.stderr and isinstance(doc, dict)
                   and set(doc) == {"code", "status"} and doc["status"] == "failed" and doc["code"] in CHILD_CODES,
                   expected="exit 1, empty stdout, one canonical failure line on stderr (input %s)" % label,
                   actual="exit %s, stdout %d byte(s), stderr %r" % (proc.returncode, len(proc.stdout),
                                                                    proc.stderr[:200]),
                   diagnosis="a probe child either writes the canonical result or the failure line, nothing else "
                             "(SESSION-ISOLATION-7)")


@check("isolation.warm-pool", clauses=["SESSION-ISOLATION-8"], level="SHOULD",
       title="the warm pool is in place before attempt:start",
       fakes="MR_SESSION_WORKER_WARM_POOL_SIZE=2; attempt:start is accepted and held while the harness reads /proc",
       expected="two probe children with their filter in place while attempt:start is pending; "
                "warm_pool_ready 2 in the summary")
def _(ctx):
    plane = ctx.plane()
    plane.control.add_fault(faults.delay(START_HOLD_S), plane.control.start_match())
    plane.start(env={"MR_SESSION_WORKER_WARM_POOL_SIZE": str(WARM_POOL)})
    plane.wait_for(plane.control.started("start", 1), "attempt:start")
    ready = [kid for kid in _probe_children(plane.proc.host_pid) if proc_field(kid, "Seccomp") == "2"]
    plane.wait_claims(1, timeout=PHASE_TIMEOUT_S + SHORT_TIMEOUT_S)
    plane.close_session()
    plane.wait()
    ctx.expect(len(ready) == WARM_POOL, expected="%d sandboxed probe children when attempt:start arrives" % WARM_POOL,
               actual="%d" % len(ready),
               diagnosis="start the pool before attempt:start, so the first probe does not pay for an "
                         "interpreter's start (SESSION-ISOLATION-8, D11)")
    summary = expect_summary(ctx, plane, terminal_state="closed")
    ctx.expect(summary["warm_pool_ready"] == WARM_POOL, expected="warm_pool_ready %d" % WARM_POOL,
               actual="warm_pool_ready %s" % summary["warm_pool_ready"],
               diagnosis="report in the summary's warm_pool_ready how many sandboxed children were ready before "
                         "attempt:start")


# isolation.pool-refill: a probe whose child works long enough to be watched (56 comparisons a row,
# as the bench's busy probe) and the rows it works through.
REFILL_ROWS = 4000


def _busy_expression():
    conjunction = {"op": "and", "args": [{"op": "ge", "column": "a", "value": -j} for j in range(13)]
                   + [{"op": "lt", "column": "b", "value": 0}]}
    return {"aggregate": "count", "where": {"op": "or", "args": [conjunction] * 4}}


@check("isolation.pool-refill", clauses=["SESSION-ISOLATION-8"], level="SHOULD",
       title="a child taken from the warm pool is replaced once its probe is reported, never while it runs",
       fakes="warm pool 1; once the warm child has its filter in place, one evaluate_expression probe whose "
             "child works through %d rows; the harness lists the node's probe children until the report and "
             "after it" % REFILL_ROWS,
       expected="no probe child but the warm one while the probe runs; a new sandboxed child after the report")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(columns=["a", "b"], rows=[[i, i % 1000] for i in range(REFILL_ROWS)])
    plane.start(env={"MR_SESSION_WORKER_WARM_POOL_SIZE": "1"})
    plane.wait_claims(1)
    warm = []

    def sandboxed():
        warm[:] = [kid for kid in _probe_children(plane.proc.host_pid) if proc_field(kid, "Seccomp") == "2"]
        return bool(warm)
    _wait(ctx, sandboxed, "the warm probe child with its filter in place",
          "start the warm pool before attempt:start (SESSION-ISOLATION-8)")
    probe_id = plane.probe("evaluate_expression", source, scan_rows=REFILL_ROWS, expression=_busy_expression())
    seen = []  # (time after the read, probe children then)
    while not plane.control.reports(probe_id) and plane.proc.running():
        kids = _probe_children(plane.proc.host_pid)
        seen.append((time.monotonic(), kids))
        time.sleep(POLL_INTERVAL_S)
    report = plane.wait_report(probe_id)
    others = sorted(set(kid for t, kids in seen if t < report.t for kid in kids if kid not in warm))
    replaced = []

    def refilled():
        replaced[:] = [kid for kid in _probe_children(plane.proc.host_pid)
                       if kid not in warm and proc_field(kid, "Seccomp") == "2"]
        return bool(replaced)
    _wait(ctx, refilled, "a new warm probe child after the report",
          "replace a child taken from the pool once its probe is reported (SESSION-ISOLATION-8, D52)")
    plane.close_session()
    plane.wait()
    doc = report.doc or {}
    ctx.expect(doc.get("outcome") is not None, expected="the probe reported",
               actual="outcome %s" % doc.get("outcome"), diagnosis="a plain probe of a plain source")
    ctx.expect(not others, expected="while the probe ran, no probe child but the warm one it took (pid %s)"
               % (warm[:1] or ["?"])[0], actual="%d other(s) started before the report: pids %s" % (
                   len(others), others[:4]),
               diagnosis="replace a child taken from the pool after the probe's report, not as it is taken: an "
                         "interpreter's start takes a core for a fifth of a second, from the probe a person waits "
                         "for (D52)")


@check("isolation.scratch", clauses=["SESSION-ISOLATION-9"], level="MUST",
       title="one private scratch directory under TMPDIR, files 0600, removed even after a crash",
       fakes="one probe whose bundle download stalls after 1 KiB, while the harness reads TMPDIR; then SIGKILL "
             "of the capability process",
       expected="one directory under TMPDIR, mode 0700, every file in it 0600; TMPDIR empty after the run")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(rows=[["x" * 64, i] for i in range(200)])
    plane.store.add_fault(faults.stall(after_bytes=1024), source.match())
    plane.probe("source_inspect", source)
    plane.start()
    scratch = plane.runs[-1].scratch
    found = {}

    def downloading():
        entries = os.listdir(scratch)
        files = [os.path.join(top, name) for top, _d, names in os.walk(scratch) for name in names]
        found.update(entries=entries, files=dict((path, os.stat(path).st_mode & 0o777) for path in files),
                     modes=dict((e, os.stat(os.path.join(scratch, e)).st_mode & 0o777) for e in entries))
        return bool(files)
    plane.wait_for(lambda: bool(plane.store.transcript), "the bundle download")
    _wait(ctx, downloading, "a file in the scratch directory",
          "download a probe's bundle into the node's private scratch directory under TMPDIR, not into memory or "
          "another directory")
    os.kill(capability_pid(ctx, plane), signal.SIGKILL)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    ctx.expect(len(found["entries"]) == 1 and list(found["modes"].values()) == [0o700],
               expected="one directory under TMPDIR, mode 0700",
               actual="entries %s" % dict((e, oct(m)) for e, m in found["modes"].items()),
               diagnosis="create one private scratch directory under TMPDIR with mode 0700 (tempfile.mkdtemp does)")
    ctx.expect(all(mode == 0o600 for mode in found["files"].values()), expected="every scratch file mode 0600",
               actual="%s" % dict((os.path.relpath(p, scratch), oct(m)) for p, m in found["files"].items()),
               diagnosis="create every scratch file with mode 0600 (tempfile.mkstemp does)")
    expect_summary(ctx, plane, failure_code="SESSION_CHILD_EXITED")
    ctx.expect(not os.listdir(scratch), expected="TMPDIR empty after the run",
               actual="%s" % os.listdir(scratch), diagnosis="the monitor removes its scratch at every end (D23)")
