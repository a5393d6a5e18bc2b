"""The runner: how it is started, its identity on disk before it works, the start gate, deadlines
fixed once, the first terminal wins, bound outcomes only, three generations at most, timeout
bundles, fencing by exact identity, and anonymous, pinned, streamed target downloads
(SCAN-RUNNER-1 to SCAN-RUNNER-10).

A runner is the one process that touches a target's bytes, and the worker must be able to kill it,
recognise its output, and prove it gone after a crash of its own. So a runner starts isolated (no
token, no inherited descriptor, its own process group, an interpreter that ignores planted
variables), its identity (pid, start time, executable) is on disk before it may do anything, and
it waits for a gate the worker opens only then: a runner whose worker died in between never works
unsupervised. Whatever ends a generation, one terminal file decides, and the worker adopts a
completed one only when it is bound to this generation, input and assignment; a crash is retried
at most three times in the same scan window, and a scan out of time still delivers a timed-out
bundle. On restart a leftover runner is killed only when /proc still shows exactly the recorded
process: a recycled pid is someone else's.

Checks that read a runner's /proc run the worker without a PID namespace (pid1=False), so the pid
the worker records is the one the harness sees.
"""

import hashlib
import os
import signal
import subprocess
import shutil
import sys
import tempfile
import time

from conformance.checks import check
from conformance.checks.scan._common import PHASE_TIMEOUT_S, SCHEDULE_SLACK_S, describe_run, faults, read_bytes
from conformance.checks.variants import each_variant
from conformance.planes.scan.bundles import build_bundle, read_bundle
from conformance.timeouts import Deadline
from conformance.planes.scan.protocol import canonical, instant, parse_strict

# SCAN-RUNNER-1: the runner's command line after the interpreter.
RUNNER_FLAGS = ["-I", "-S", "-B"]
RUNNER_COMMAND = ["--", "_assignment_runner", "--root"]
# SCAN-RUNNER-1: the only variables a runner's environment may hold.
RUNNER_ENV = ("SSL_CERT_FILE", "TMPDIR")
# SCAN-RUNNER-2: the runner record's members.
RECORD_KEYS = ("attempt", "bundle_ref", "events_ref", "generation", "identity", "input_ref", "input_sha256",
               "last_event", "operation", "root_name", "scan_deadline_at", "scan_started_at", "start_ref",
               "status", "terminal_ref", "terminal_sha256", "timeout_phase", "watchdog_deadline_at")
GATE_KEYS = ("generation", "identity", "input_sha256", "schema")
# SCAN-RUNNER-7: generations per operation of one assignment.
RUNNER_MAX_ATTEMPTS = 3
# A target stalls after this many bytes of its body: the runner is mid-download, alive, for as long
# as a check needs to read it.
STALL_AFTER_BYTES = 8
# SCAN-RUNNER-4: the scan timeout of the watchdog check, and the assignment deadline of its second
# variant (with a target timeout far beyond it): small, so the check runs in seconds.
SHORT_SCAN_TIMEOUT_S = 2
SHORT_ASSIGNMENT_DEADLINE_S = 3.0
LONG_SCAN_TIMEOUT_S = 60
# SCAN-RUNNER-10: a target large enough that holding it whole shows in the runner's peak memory,
# and how much that peak may grow while the runner reads it (a 64 KiB read, a line piece, TLS
# buffers: well under it; a runner that holds the body grows by the body's size).
LARGE_TARGET_BYTES = 40 << 20
RUNNER_GROWTH_LIMIT_BYTES = 16 << 20
# The large target's first GET stalls this many bytes before its end: the runner has read nearly all of it.
LARGE_STALL_BEFORE_END = 1 << 20
# SCAN-RUNNER-10: a target whose pinned size is wrong is refused before its body is read: of a
# target this large, less than half may have left the store (socket buffers hold a few MiB).
MISMATCH_TARGET_BYTES = 32 << 20
# SCAN-RUNNER-3: the watchdog window of a hand-made runner root: long enough for the interpreter to
# start and poll its gate, short enough that the check waits for its exit.
GATE_WINDOW_S = 3.0
# The window of a hand-made runner that should not wait for its deadline (a gate naming another process:
# it exits at once; its own gate: it scans a small target): room for a slow interpreter start.
OPEN_WINDOW_S = 12.0
# The retried generation's upload is held this long, so the fenced root is still on disk (in the work
# tree or abandoned/) when the check reads its terminal.json: a resolution removes it.
UPLOAD_DELAY_S = 1.0
# A harness-owned process a planted identity may name (SCAN-RUNNER-9): it must outlive the check's run.
SLEEP_S = "120"


# ------------------------------------------------------------------ /proc and the trees
def proc_fields(pid):
    """Fields 3.. of /proc/<pid>/stat (index 0 is field 3), or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    return text[text.rindex(")") + 1:].split()


def identity_of(pid):
    """{pid, creation_time, executable} of a live process as SCAN-RUNNER-2 spells it, or None."""
    fields = proc_fields(pid)
    try:
        return {"pid": pid, "creation_time": fields[19], "executable": os.readlink("/proc/%d/exe" % pid)}
    except (OSError, TypeError, IndexError):
        return None


def alive(pid):
    fields = proc_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def fd_targets(pid):
    """{fd: link target} of a process's open descriptors ({} when unreadable)."""
    found = {}
    try:
        names = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return found
    for name in names:
        try:
            found[int(name)] = os.readlink("/proc/%d/fd/%s" % (pid, name))
        except OSError:
            continue
    return found


def record_of(plane, slot=0):
    return (plane.slot_state(slot) or {}).get("runner") or None


def target_gets(plane, target):
    key = plane.targets.key(target)
    return [e for e in plane.store.transcript if e.method == "GET" and e.key == key]


def wait_running(plane, target, gets, seen=(), slot=0):
    """The runner record of slot once a generation not in seen runs and target has had gets GETs."""
    def ready():
        record = record_of(plane, slot)
        return bool(record and record.get("status") == "running" and record.get("identity")
                    and record.get("generation") not in seen and len(target_gets(plane, target)) >= gets)
    plane.wait_for(ready, "a running runner (generation %d) mid-download" % (len(seen) + 1))
    return record_of(plane, slot)


def running_runner(ctx, plane, target, first=None, **start):
    """Start the worker without a PID namespace, the target's GETs (the first `first`, None: all) stalled;
    (life, record, pid)."""
    plane.store.add_fault(faults.stall(STALL_AFTER_BYTES), plane.target_match(target, first=first))
    life = plane.start(pid1=False, **start)
    record = wait_running(plane, target, 1)
    return life, record, record["identity"]["payload"]["pid"]


def report_codes(res):
    """(failure_code, [diagnostic codes]) of the last terminal report of res."""
    if not res.terminals:
        return None, []
    doc = res.terminals[-1].doc if isinstance(res.terminals[-1].doc, dict) else {}
    return doc.get("failure_code"), [d.get("code") for d in doc.get("diagnostics") or [] if isinstance(d, dict)]


def harness_sleep(ctx):
    """A process of the harness's own, leading its own group (so a careless killpg of its pid would hit it)."""
    proc = subprocess.Popen(["sleep", SLEEP_S], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    ctx.note("harness-owned sleep: pid %d" % proc.pid)
    return proc


def end_sleep(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def dead_identity(ctx):
    """The identity of a process that existed and is gone (a runner that died with its worker)."""
    proc = harness_sleep(ctx)
    identity = identity_of(proc.pid)
    end_sleep(proc)
    return identity


def private_dir(path):
    os.makedirs(path, 0o700, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def private_file(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


# ------------------------------------------------------------------ a hand-made generation
def runner_input(res, assignment, slot, generation, started, deadline, watchdog, operation="execute",
                 timeout_phase=None, attempt=1):
    return {"schema": 1, "generation": generation, "slot_id": slot, "reservation_id": res.reservation_id,
            "bundle_id": res.bundle_id, "scan_event_id": res.scan_event_id,
            "execution_snapshot_sha256": assignment["execution_snapshot_sha256"], "operation": operation,
            "timeout_phase": timeout_phase, "attempt": attempt, "scan_started_at": instant(started),
            "scan_deadline_at": instant(deadline), "watchdog_deadline_at": instant(watchdog),
            "declared_bundle_bytes": assignment["reservation"]["declared_bundle_bytes"],
            "targets": assignment["targets"]}


def make_root(work_dir, res, slot, generation, doc):
    """<work>/worker-assignment-<slot>-<rid>-<generation>/ with input.json; (root, root name, input digest)."""
    name = "worker-assignment-%d-%d-%s" % (slot, res.reservation_id, generation)
    root = private_dir(os.path.join(private_dir(work_dir), name))
    for sub in ("bundle", "bundle/tmp", "bundle/ready"):  # as a worker makes a root (the contract leaves it open)
        private_dir(os.path.join(root, sub))
    data = canonical(doc)
    private_file(os.path.join(root, "input.json"), data)
    return root, name, hashlib.sha256(data).hexdigest()


def plant_completed(ctx, plane, res, slot=0, status="running", late=False, breaks=None, published=True):
    """A slot state `assigned` whose recorded generation has published a completed terminal with a
    good bundle in its root, as a runner would have just before its worker was SIGKILLed; the
    runner itself is gone. late: decided_at after the scan deadline; breaks: one binding broken
    ("identity", "generation", "sequence", "digest"); published False: no terminal.json (the runner died
    first). Returns the planted bundle's SHA-256."""
    _request_id, assignment = plane.grant(res)
    now = time.time()
    generation = os.urandom(16).hex()
    started, deadline = now - 1.0, now + 60.0
    doc = runner_input(res, assignment, slot, generation, started, deadline, deadline)
    root, name, input_sha256 = make_root(plane.work_dir, res, slot, generation, doc)
    data = build_bundle(res, slot_id=slot, generation=generation)
    private_file(os.path.join(root, "bundle", "ready", "%s.jsonl" % res.bundle_id), data)
    report = read_bundle(data, res)
    identity = dead_identity(ctx)
    gate = canonical({"schema": 1, "generation": generation, "input_sha256": input_sha256, "identity": identity})
    private_file(os.path.join(root, "owner.json"), gate)
    private_file(os.path.join(root, "start.json"), gate)
    private_file(os.path.join(root, "events.jsonl"), b"")
    binding = {"slot_id": slot, "reservation_id": res.reservation_id, "bundle_id": res.bundle_id,
               "scan_event_id": res.scan_event_id,
               "execution_snapshot_sha256": assignment["execution_snapshot_sha256"]}
    bundle = {"ready_relative_path": "ready/%s.jsonl" % res.bundle_id, "bytes": len(data),
              "payload_sha256": hashlib.sha256(data).hexdigest(), "events_sha256": report.events_sha256}
    outcome = {"status": "succeeded", "error": None, "final_phase": "bundling", "identity": binding,
               "last_event_sequence": 0, "bundle": bundle}
    terminal = {"schema": 1, "decision": "completed", "decided_at": instant(deadline + 5.0 if late else now),
                "generation": generation, "input_sha256": input_sha256, "outcome": outcome}
    if breaks == "identity":
        binding["bundle_id"] = os.urandom(16).hex()
        bundle["ready_relative_path"] = "ready/%s.jsonl" % binding["bundle_id"]
    elif breaks == "generation":
        terminal["generation"] = os.urandom(16).hex()
    elif breaks == "sequence":
        outcome["last_event_sequence"] = 1
    elif breaks == "digest":
        bundle["payload_sha256"] = hashlib.sha256(b"another bundle").hexdigest()
    if published:
        private_file(os.path.join(root, "terminal.json"), canonical(terminal))
    record = {"generation": generation, "input_sha256": input_sha256, "root_name": name,
              "input_ref": name + "/input.json", "events_ref": name + "/events.jsonl",
              "start_ref": name + "/start.json", "terminal_ref": name + "/terminal.json", "bundle_ref": None,
              "scan_started_at": doc["scan_started_at"], "scan_deadline_at": doc["scan_deadline_at"],
              "watchdog_deadline_at": doc["watchdog_deadline_at"], "operation": "execute", "timeout_phase": None,
              "attempt": 1, "status": status,
              "identity": {"host": identity, "payload": identity, "job_membership_verified": True},
              "last_event": None, "terminal_sha256": None}
    plane.write_slot(slot, {"schema": 2, "phase": "assigned", "assignment": assignment, "runner": record,
                            "retained_work": []})
    return bundle["payload_sha256"] if breaks != "digest" else hashlib.sha256(data).hexdigest()


def uploads_of(res):
    return [c.body_sha256 for c in res.puts if c.body_sha256]


# ------------------------------------------------------------------ SCAN-RUNNER-1, -2
@check("runner.spawn", clauses=["SCAN-RUNNER-1"], level="MUST",
       title="a runner: -I -S -B, the node file, _assignment_runner --root; two variables; no inherited "
             "descriptor; its own session; planted PYTHONPATH/PYTHONSTARTUP ignored",
       fakes="the target's GET stalls after %d bytes (the runner stays mid-download); the worker's environment "
             "holds a PYTHONPATH whose sitecustomize.py, and a PYTHONSTARTUP file, record every interpreter that "
             "runs them" % STALL_AFTER_BYTES,
       expected="/proc of the runner: argv [python, -I, -S, -B, NODE, --, _assignment_runner, --root, ROOT], "
                "environment exactly SSL_CERT_FILE and TMPDIR (the worker's values), fds 0-2 on /dev/null and no "
                "socket, pipe or state file shared with the worker, session and group led by itself; no record "
                "of a planted module from the runner")
def _(ctx):
    # Arrange
    marks = ctx.tmpdir("marks")
    site = ctx.tmpdir("site")
    recorder = ("import os, sys\n"
                "with open(os.path.join(%r, str(os.getpid())), 'w') as out:\n"
                "    out.write(' '.join(sys.argv))\n" % marks)
    with open(os.path.join(site, "sitecustomize.py"), "w") as out:
        out.write(recorder)
    startup = os.path.join(site, "startup.py")
    with open(startup, "w") as out:
        out.write(recorder)
    plane = ctx.plane(extra_env={"PYTHONPATH": site, "PYTHONSTARTUP": startup})
    target = plane.add_target("slow.txt", b"x" * 4096)
    plane.add_assignment(targets=[target])
    # Act
    life, record, pid = running_runner(ctx, plane, target)
    argv = read_cmdline(pid)
    environ = read_environ(pid)
    fds = fd_targets(pid)
    worker_fds = fd_targets(life.proc.host_pid)
    worker_env = read_environ(life.proc.host_pid) or {}
    fields = proc_fields(pid) or []
    runner_exe, worker_exe = (identity_of(pid) or {}).get("executable"), (identity_of(life.proc.host_pid) or {}).get(
        "executable")
    plane.stop(signal.SIGINT)
    # Assert
    root = os.path.join(plane.work_dir, record["root_name"])
    node = ctx.node.path
    # D34: NODE is the node file, or its bytecode in the state tree named by the file's present SHA-256
    # (runner.warm-start and runner.code-changed judge that file further).
    warm = None
    if node is not None:
        with open(node, "rb") as handle:
            warm = os.path.join(plane.state_dir, "runner-code", "runner-%s." % hashlib.sha256(handle.read()).hexdigest())
    ctx.expect(argv is not None and len(argv) == 9 and argv[1:4] == RUNNER_FLAGS and argv[5:8] == RUNNER_COMMAND
               and os.path.realpath(argv[8]) == os.path.realpath(root)
               and (node is None or os.path.realpath(argv[4]) == os.path.realpath(node)
                    or (argv[4].startswith(warm) and argv[4].endswith(".pyc") and "/" not in argv[4][len(warm):])),
               expected="argv [python, -I, -S, -B, %s, --, _assignment_runner, --root, %s]" % (
                   "NODE" if node is None else "%s or %s<tag>.pyc" % (node, warm), root),
               actual="argv %r" % (argv,),
               diagnosis="start a runner as [sys.executable, '-I', '-S', '-B', NODE, '--', '_assignment_runner', "
                         "'--root', ROOT]: -I ignores planted variables, -S the site directory, -B writes no bytecode")
    ctx.expect(runner_exe is not None and runner_exe == worker_exe,
               expected="the runner runs the worker's interpreter (%s)" % worker_exe,
               actual="it runs %s" % runner_exe, diagnosis="argv[0] of a runner is sys.executable")
    wanted_env = dict((name, worker_env[name]) for name in RUNNER_ENV if name in worker_env)
    ctx.expect(environ == wanted_env, expected="the runner's environment exactly %r" % sorted(wanted_env),
               actual="its environment holds %r" % sorted(environ or {}),
               diagnosis="pass env= with SSL_CERT_FILE and TMPDIR only: the token file's path, HOME, the XDG trees and "
                         "proxy variables are not the runner's")
    on_null = dict((fd, fds.get(fd)) for fd in (0, 1, 2))
    ctx.expect(all(t == "/dev/null" for t in on_null.values()), expected="fds 0, 1, 2 on /dev/null",
               actual="fds 0-2 are %r" % on_null,
               diagnosis="stdin, stdout and stderr of a runner are /dev/null: nothing it prints reaches the worker's "
                         "output")
    shared = set(t for t in worker_fds.values() if t.startswith(("socket:", "pipe:")))
    inherited = sorted((fd, t) for fd, t in fds.items() if fd > 2 and (
        t in shared or t.startswith(plane.state_dir) or t == plane.token_file))
    ctx.expect(not inherited, expected="no descriptor of the worker's open in the runner",
               actual="the runner holds %r, also open in the worker (or in its state tree)" % inherited,
               diagnosis="close every descriptor but 0-2 in the child (close_fds=True, no pass_fds)")
    ctx.expect(len(fields) > 3 and fields[2] == str(pid) and fields[3] == str(pid),
               expected="the runner leads its own session and process group (pgrp = sid = %d)" % pid,
               actual="pgrp %s, sid %s" % (fields[2] if len(fields) > 2 else "?",
                                           fields[3] if len(fields) > 3 else "?"),
               diagnosis="start_new_session=True, so one killpg reaches every process of the runner")
    recorded = []
    for name in os.listdir(marks):
        text = (read_bytes(os.path.join(marks, name)) or b"").decode("utf-8", "replace")
        if "_assignment_runner" in text:
            recorded.append(text)
    ctx.expect(not recorded, expected="no planted module runs in a runner",
               actual="the planted sitecustomize/startup ran in %r" % recorded[:2],
               diagnosis="run the runner with -I (and -S): PYTHONPATH and PYTHONSTARTUP have no effect on it")


@check("runner.identity", clauses=["SCAN-RUNNER-2"], level="MUST",
       title="the runner record: its exact members, the runner's /proc identity, owner.json and start.json",
       fakes="the target's GET stalls after %d bytes (the runner stays mid-download)" % STALL_AFTER_BYTES,
       expected="slot-0.json's runner has exactly the record's members, status running, attempt 1, operation "
                "execute, the refs under its root, input_sha256 the digest of input.json, identity {host, payload: "
                "{pid, creation_time: field 22 of /proc/<pid>/stat, executable: /proc/<pid>/exe}, "
                "job_membership_verified: true}; owner.json and start.json name that generation, digest and identity")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    target = plane.add_target("slow.txt", b"y" * 4096)
    plane.add_assignment(targets=[target])
    # Act
    _life, record, pid = running_runner(ctx, plane, target)
    seen = identity_of(pid)
    root = os.path.join(plane.work_dir, record["root_name"])
    files = dict((name, read_bytes(os.path.join(root, name))) for name in ("input.json", "owner.json", "start.json"))
    plane.stop(signal.SIGINT)
    # Assert
    ctx.expect(tuple(sorted(record)) == RECORD_KEYS, expected="the record's members %s" % ", ".join(RECORD_KEYS),
               actual="%s" % ", ".join(sorted(record)), diagnosis="persist exactly the members of SCAN-RUNNER-2")
    name = record["root_name"]
    refs = dict((key, record.get(key)) for key in ("input_ref", "events_ref", "start_ref", "terminal_ref"))
    wanted_refs = {"input_ref": name + "/input.json", "events_ref": name + "/events.jsonl",
                   "start_ref": name + "/start.json", "terminal_ref": name + "/terminal.json"}
    ctx.expect(refs == wanted_refs and record.get("bundle_ref") is None and record.get("attempt") == 1
               and record.get("operation") == "execute" and record.get("timeout_phase") is None,
               expected="refs %r, bundle_ref null, attempt 1, operation execute" % wanted_refs,
               actual="refs %r, bundle_ref %r, attempt %r, operation %r" % (
                   refs, record.get("bundle_ref"), record.get("attempt"), record.get("operation")),
               diagnosis="record the runner with its four refs under its root, bundle_ref null, attempt 1, operation "
                         "execute and no timeout phase before it starts")
    digest = hashlib.sha256(files["input.json"]).hexdigest() if files["input.json"] is not None else None
    ctx.expect(digest is not None and record.get("input_sha256") == digest,
               expected="input_sha256 the SHA-256 of input.json (%s)" % digest,
               actual="input_sha256 %r" % record.get("input_sha256"),
               diagnosis="record in input_sha256 the SHA-256 of the input.json written for the runner")
    identity = record.get("identity") or {}
    wanted = {"host": seen, "payload": seen, "job_membership_verified": True}
    ctx.expect(seen is not None and identity == wanted,
               expected="identity %r (what /proc shows of the runner)" % wanted, actual="identity %r" % identity,
               diagnosis="record pid, field 22 of /proc/<pid>/stat as a decimal string and the target of "
                         "/proc/<pid>/exe, and job_membership_verified true when the runner leads its group")
    gate = {"schema": 1, "generation": record.get("generation"), "input_sha256": digest, "identity": seen}
    for filename in ("owner.json", "start.json"):
        raw = files[filename]
        ctx.expect(raw is not None and raw == canonical(gate),
                   expected="%s: canonical %r" % (filename, gate), actual="%s: %r" % (filename, raw),
                   diagnosis="write owner.json, then start.json, once the identity is persisted: {schema: 1, "
                             "generation, input_sha256, identity}")


def read_cmdline(pid):
    raw = read_bytes("/proc/%d/cmdline" % pid)
    if raw is None:
        return None
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0")[:-1]]


def read_environ(pid):
    raw = read_bytes("/proc/%d/environ" % pid)
    if raw is None:
        return None
    return dict(item.decode("utf-8", "replace").partition("=")[::2] for item in raw.split(b"\0") if item)


# ------------------------------------------------------------------ SCAN-RUNNER-3
def run_runner_by_hand(ctx, plane, gate, window_s):
    """A root made by hand for a reservation, and the node started on it as a runner with no worker.
    gate: None (no start.json), "other" (a gate naming another pid) or "own" (the runner's own
    identity, written once it runs). Returns (proc, root, the target, the window's end)."""
    target = plane.add_target("gated.txt", b"gated\n")
    res = plane.add_assignment(targets=[target], queued=False)
    _request_id, assignment = plane.grant(res)
    now = time.time()
    generation = os.urandom(16).hex()
    doc = runner_input(res, assignment, 0, generation, now, now + window_s, now + window_s)
    root, _name, input_sha256 = make_root(plane.work_dir, res, 0, generation, doc)
    env = dict((name, value) for name, value in plane.env().items() if name in RUNNER_ENV)
    if gate == "other":
        other = identity_of(os.getpid())
        private_file(os.path.join(root, "start.json"), canonical(
            {"schema": 1, "generation": generation, "input_sha256": input_sha256, "identity": other}))
    proc = ctx.start_node(env, args=["--", "_assignment_runner", "--root", root], pid1=False)
    if gate == "own":
        identity = identity_of(proc.host_pid)
        private_file(os.path.join(root, "start.json"), canonical(
            {"schema": 1, "generation": generation, "input_sha256": input_sha256, "identity": identity}))
    return proc, root, target, now + window_s


@check("runner.start-gate", clauses=["SCAN-RUNNER-3"], level="MUST",
       title="a runner does nothing until start.json names its generation, input digest and own identity",
       fakes="a runner root made by hand (input.json and a watchdog window) and the node started on it as a "
             "runner, with no worker: no start.json (a %.0f s window); a start.json naming another process; then "
             "(the control) its own identity" % GATE_WINDOW_S,
       expected="without its gate: no target GET, no events.jsonl, no terminal.json, no bundle; it exits by itself "
                "by its watchdog deadline (before it, for a gate naming another process); with its own gate it "
                "fetches the target and publishes a completed terminal")
def _(ctx):
    def act(label, gate):
        # Arrange
        plane = ctx.plane()
        window_s = GATE_WINDOW_S if gate is None else OPEN_WINDOW_S
        # Act
        proc, root, target, window_end = run_runner_by_hand(ctx, plane, gate, window_s)
        result = proc.wait(window_s + PHASE_TIMEOUT_S)
        exited_at = time.time()
        ctx.note("hand-made runner (%s): %s" % (label, result.describe()))
        # Assert
        ctx.expect(not result.timed_out, expected="%s: the runner exits by itself" % label,
                   actual="it was still running %.0f s after its watchdog deadline" % PHASE_TIMEOUT_S,
                   diagnosis="a runner stops itself at its watchdog deadline, gate or not")
        entries = sorted(os.listdir(root))
        terminal = read_bytes(os.path.join(root, "terminal.json"))
        gets = target_gets(plane, target)
        if gate == "own":
            ctx.expect(len(gets) == 1 and terminal is not None and b'"completed"' in terminal,
                       expected="%s: the runner fetches its target and publishes completed" % label,
                       actual="%d GET(s); terminal.json %r" % (len(gets), terminal),
                       diagnosis="the control failed: a gate naming the runner's generation, input digest and "
                                 "identity opens it")
            return
        worked = [name for name in entries if name in ("events.jsonl", "terminal.json")]
        bundles = []
        for top, _dirs, names in os.walk(os.path.join(root, "bundle")):
            bundles += [os.path.join(top, name) for name in names]
        ctx.expect(not gets and not worked and not bundles,
                   expected="%s: no GET of the target, no events.jsonl, no terminal.json, no bundle" % label,
                   actual="%d GET(s); files %r; bundle files %r" % (len(gets), entries, bundles),
                   diagnosis="wait for start.json naming this generation, this input digest and this process before "
                             "doing anything: a runner whose identity never reached the state must not work")
        ctx.expect(exited_at <= window_end + SCHEDULE_SLACK_S * 2 if gate is None else exited_at < window_end,
                   expected="%s: the runner exits %s" % (label, "by its watchdog deadline" if gate is None
                                                         else "at once, before its watchdog deadline"),
                   actual="it exited %.1f s after that deadline" % (exited_at - window_end),
                   diagnosis="a runner that may not work exits: at once when a start gate exists that does not "
                             "admit it, by its watchdog deadline when there is none")
    each_variant(ctx, [("no gate", None), ("a gate naming another process", "other"), ("its own gate", "own")], act)


# ------------------------------------------------------------------ SCAN-RUNNER-4, -8
@check("runner.watchdog", clauses=["SCAN-RUNNER-4", "SCAN-RUNNER-8"], level="MUST",
       title="a scan out of time is killed at its deadline and still delivers a timed_out bundle",
       fakes="the target's GET stalls after %d bytes; target_scan_timeout_seconds %d" % (
           STALL_AFTER_BYTES, SHORT_SCAN_TIMEOUT_S),
       expected="the download is cut about %d s after the claim (never before), a bundle with status timed_out "
                "and timeout_phase scanning is uploaded and accepted, and no terminal report is sent" %
                SHORT_SCAN_TIMEOUT_S)
def _(ctx):
    # Arrange
    plane = ctx.plane()
    target = plane.add_target("stalled.txt", b"z" * 4096)
    plane.store.add_fault(faults.stall(STALL_AFTER_BYTES), plane.target_match(target))
    res = plane.add_assignment(targets=[target], target_scan_timeout_s=SHORT_SCAN_TIMEOUT_S)
    # Act
    plane.start()
    claim = plane.wait_claims(1)[0]
    # The upload is judged, not the slot's timeout_bundle record: with a warm runner that
    # generation can come and go between two looks at the state file (a flake seen in CI).
    plane.wait_resolved(res, timeout=SHORT_SCAN_TIMEOUT_S + PHASE_TIMEOUT_S)
    cut = (res.puts[0].t - claim.t) if res.puts else None
    # Assert
    ctx.expect(cut is not None and SHORT_SCAN_TIMEOUT_S <= cut <= SHORT_SCAN_TIMEOUT_S + SCHEDULE_SLACK_S * 2,
               expected="the stalled scan given up at its deadline: the timeout bundle's upload begun %d s "
                        "after the claim (never before; within %.0f s of it)" % (SHORT_SCAN_TIMEOUT_S,
                                                                                 SCHEDULE_SLACK_S * 2),
               actual=lambda: ("it began %.2f s after the claim" % cut) if cut is not None
               else "no upload (%s)" % describe_run(plane),
               diagnosis="fix the scan deadline at min(now + target_scan_timeout_seconds, assignment deadline) and "
                         "kill the runner's group when it passes")
    ctx.expect(res.resolution == "bundle_accepted" and not res.terminals,
               expected="a bundle accepted and no terminal report",
               actual=lambda: "resolution %s, %d report(s) (%s)" % (res.resolution, len(res.terminals),
                                                                   describe_run(plane)),
               diagnosis="a timed-out execute generation is followed by a timeout_bundle generation whose bundle is "
                         "uploaded like any other (SCAN-RUNNER-8)")
    report = read_bundle(res.bundle_path, res)
    header = report.header or {}
    ctx.expect(not report.problems and header.get("status") == "timed_out"
               and header.get("timeout_phase") == "scanning",
               expected="a good bundle whose header says status timed_out, timeout_phase scanning",
               actual="header status %r, timeout_phase %r; problems %r" % (
                   header.get("status"), header.get("timeout_phase"), report.problems[:3]),
               diagnosis="the timeout bundle names the phase the scan had reached (the last event's)")


@check("runner.assignment-deadline", clauses=["SCAN-RUNNER-4", "SCAN-RUNNER-8"], level="MUST",
       title="the scan deadline is the assignment deadline when that comes first; with no time left, a report",
       fakes="the target's GET stalls; the assignment deadline %.0f s after the grant, target_scan_timeout_seconds "
             "%d" % (SHORT_ASSIGNMENT_DEADLINE_S, LONG_SCAN_TIMEOUT_S),
       expected="the download is cut by the assignment deadline (about %.0f s after the claim), no bundle is "
                "uploaded and the report is client_process_failed" % SHORT_ASSIGNMENT_DEADLINE_S)
def _(ctx):
    # Arrange
    plane = ctx.plane()
    target = plane.add_target("stalled.txt", b"w" * 4096)
    plane.store.add_fault(faults.stall(STALL_AFTER_BYTES), plane.target_match(target))
    res = plane.add_assignment(targets=[target], target_scan_timeout_s=LONG_SCAN_TIMEOUT_S,
                               assignment_deadline_in_s=SHORT_ASSIGNMENT_DEADLINE_S)
    # Act
    plane.start()
    claim = plane.wait_claims(1)[0]
    plane.wait_resolved(res, timeout=SHORT_ASSIGNMENT_DEADLINE_S + PHASE_TIMEOUT_S)
    # Assert
    reports = plane.server.calls("terminal", res)
    cut = (reports[0].t - claim.t) if reports else None
    ctx.expect(cut is not None and cut <= SHORT_ASSIGNMENT_DEADLINE_S + SCHEDULE_SLACK_S * 2,
               expected="the stalled scan given up at the assignment deadline: its report within %.0f s of it "
                        "(%.0f s after the claim)" % (SCHEDULE_SLACK_S * 2, SHORT_ASSIGNMENT_DEADLINE_S),
               actual="it ended %s" % ("%.2f s after the claim" % cut if cut is not None else "never"),
               diagnosis="the scan deadline is min(now + target_scan_timeout_seconds, assignment_deadline_at)")
    failure, codes = report_codes(res)
    ctx.expect(not res.puts and failure == "client_process_failed",
               expected="no upload and a report client_process_failed (no time is left for a timeout bundle)",
               actual=lambda: "%d upload(s); report %r %r (%s)" % (len(res.puts), failure, codes, describe_run(plane)),
               diagnosis="when no time is left for a timeout bundle, report client_process_failed and upload nothing")


# ------------------------------------------------------------------ SCAN-RUNNER-7 (and -4 across retries)
@check("runner.retries", clauses=["SCAN-RUNNER-7", "SCAN-RUNNER-4"], level="MUST",
       title="a runner that dies is retried in the same scan window, three generations at most, then a report",
       fakes="every GET of the target stalls; the check SIGKILLs each runner mid-download; the first terminal "
             "report gets a 503 (so the slot's terminal_pending state can be read)",
       expected="three generations with attempts 1, 2, 3, each with the same scan_started_at and scan_deadline_at; "
                "no fourth GET; retained_work names the three roots, each under work/abandoned/; a report "
                "client_process_failed and no upload")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    target = plane.add_target("crashy.txt", b"v" * 4096)
    res = plane.add_assignment(targets=[target])
    plane.server.add_fault(faults.status(503), plane.server.terminal_match(first=1))
    # Act
    life, record, pid = running_runner(ctx, plane, target)
    records = [record]
    os.kill(pid, signal.SIGKILL)
    for number in range(2, RUNNER_MAX_ATTEMPTS + 1):
        record = wait_running(plane, target, number, seen=[r["generation"] for r in records])
        records.append(record)
        os.kill(record["identity"]["payload"]["pid"], signal.SIGKILL)
    state = plane.wait_phase(0, "terminal_pending")
    abandoned = plane.listing("work", "abandoned")
    plane.wait_resolved(res)
    gets = len(target_gets(plane, target))
    plane.stop()
    # Assert
    ctx.expect([r.get("attempt") for r in records] == [1, 2, 3],
               expected="attempts 1, 2, 3", actual="attempts %r" % [r.get("attempt") for r in records],
               diagnosis="retry a runner that died with a new generation, attempts 1, 2 and 3, in the same scan window")
    windows = set((r.get("scan_started_at"), r.get("scan_deadline_at")) for r in records)
    ctx.expect(len(windows) == 1, expected="one scan window for every generation",
               actual="windows %r" % sorted(windows),
               diagnosis="a retry keeps the first generation's scan_started_at and scan_deadline_at (SCAN-RUNNER-4)")
    ctx.expect(gets == RUNNER_MAX_ATTEMPTS, expected="%d GETs of the target, one per generation" % RUNNER_MAX_ATTEMPTS,
               actual="%d GETs" % gets, diagnosis="after RUNNER_MAX_ATTEMPTS generations, report; no fourth")
    wanted = ["abandoned/" + r["root_name"] for r in records]
    ctx.expect(state.get("retained_work") == wanted and all(r["root_name"] in abandoned for r in records),
               expected="retained_work %r, each root under work/abandoned/" % wanted,
               actual="retained_work %r; work/abandoned/ holds %r" % (state.get("retained_work"), abandoned),
               diagnosis="move each closed generation's root to <work>/abandoned/ and name it in retained_work")
    failure, codes = report_codes(res)
    ctx.expect(failure == "client_process_failed" and not res.puts,
               expected="a report client_process_failed, no upload",
               actual="report %r %r; %d upload(s)" % (failure, codes, len(res.puts)),
               diagnosis="after the last generation, report client_process_failed; upload nothing")


# ------------------------------------------------------------------ SCAN-RUNNER-9 (and -3's fencing)
@check("runner.fence-exact", clauses=["SCAN-RUNNER-9"], level="MUST",
       title="on restart a recorded runner is killed only when /proc shows its exact identity",
       fakes="two planted slots whose runner records name harness-owned `sleep` processes (each leads its own "
             "group): slot 0 with another creation_time, slot 1 with another executable",
       expected="both sleeps are alive after both reservations are scanned again and accepted")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    sleeps = [harness_sleep(ctx), harness_sleep(ctx)]
    try:
        reservations = []
        for slot, proc in enumerate(sleeps):
            res = plane.add_assignment(queued=False)
            plant_completed(ctx, plane, res, slot=slot, published=False)
            state = plane.slot_state(slot)
            identity = identity_of(proc.pid)
            if slot == 0:
                identity["creation_time"] = str(int(identity["creation_time"]) - 1)
            else:
                identity["executable"] = sys.executable if identity["executable"] != sys.executable else "/bin/sh"
            state["runner"]["identity"] = {"host": identity, "payload": identity, "job_membership_verified": True}
            plane.write_slot(slot, state)
            reservations.append(res)
        # Act
        plane.start(parallelism=2, pid1=False)  # the worker sees the harness's pids
        for res in reservations:
            plane.wait_resolved(res)
        survivors = [alive(proc.pid) for proc in sleeps]
        plane.stop()
        # Assert
        ctx.expect(all(survivors), expected="both harness-owned sleeps alive",
                   actual="alive: %r (slot 0: other creation_time, slot 1: other executable)" % survivors,
                   diagnosis="signal a recorded runner only when /proc shows the recorded pid with the recorded "
                             "creation_time and executable: a pid with another is someone else's")
        ctx.expect(all(res.resolution == "bundle_accepted" for res in reservations),
                   expected="both reservations scanned again and accepted",
                   actual=lambda: "resolutions %r (%s)" % ([r.resolution for r in reservations], describe_run(plane)),
                   diagnosis="after fencing the recorded runners, scan each reservation again and upload it")
    finally:
        for proc in sleeps:
            end_sleep(proc)


@check("runner.fence-leftover", clauses=["SCAN-RUNNER-9", "SCAN-RUNNER-3"], level="MUST",
       title="a runner left by a worker killed outright is fenced and killed on restart, then retried",
       fakes="no PID namespace; the first GET of the target stalls; only the worker is SIGKILLed while its runner "
             "is mid-download (the runner, in its own session, survives), then the worker is restarted",
       expected="the leftover runner is dead by the time the reservation resolves; its generation's terminal says "
                "fenced; a new generation's bundle is uploaded and accepted")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    target = plane.add_target("leftover.txt", b"u" * 4096)
    res = plane.add_assignment(targets=[target])
    plane.server.add_fault(faults.delay(UPLOAD_DELAY_S), plane.server.bundle_match(first=1))
    # Act
    first, record, pid = running_runner(ctx, plane, target, first=1)
    first.proc.signal(signal.SIGKILL)  # the worker alone: its runner leads a session of its own
    first.wait(PHASE_TIMEOUT_S)
    survived = alive(pid)
    root = os.path.join(plane.work_dir, record["root_name"])
    plane.restart()
    terminal = {}
    plane.wait_for(lambda: not alive(pid), "the leftover runner killed")
    for path in (root, os.path.join(plane.work_dir, "abandoned", record["root_name"])):
        raw = read_bytes(os.path.join(path, "terminal.json"))
        if raw:
            terminal = _json(raw)
            break
    plane.wait_resolved(res)
    # Assert
    ctx.expect(survived, expected="the runner outlived its worker's SIGKILL (the setup of this check)",
               actual="it died with the worker", diagnosis="a runner in its own session survives its worker")
    ctx.expect(terminal.get("decision") == "fenced" and terminal.get("generation") == record["generation"],
               expected="the leftover generation's terminal.json says fenced",
               actual="terminal.json %r" % (terminal,),
               diagnosis="on restart publish fenced for the recorded generation before anything else")
    report = read_bundle(res.bundle_path, res) if res.bundle_path else None
    generation = (report.header or {}).get("generation") if report else None
    ctx.expect(res.resolution == "bundle_accepted" and generation not in (None, record["generation"]),
               expected="a new generation's bundle accepted",
               actual=lambda: "resolution %s, bundle generation %r (%s)" % (res.resolution, generation,
                                                                            describe_run(plane)),
               diagnosis="after fencing a leftover runner, start a new generation and upload its bundle")


def _json(raw):
    """A runner file parsed strictly; {} when it is not a JSON object."""
    try:
        value = parse_strict(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# ------------------------------------------------------------------ SCAN-RUNNER-5, -6 (planted generations)
def finish(plane, res):
    plane.start()
    plane.wait_resolved(res)
    plane.stop()


@check("runner.adopt-bound", clauses=["SCAN-RUNNER-6", "SCAN-RUNNER-9"], level="MUST",
       title="a completed terminal left by a runner is adopted only when it is bound to its generation and slot",
       fakes="a slot state whose recorded generation published completed with a good bundle and then died with "
             "its worker: bound (the control); its outcome naming another bundle_id; its terminal naming another "
             "generation; its last_event_sequence beyond events.jsonl; its bundle's digest other than the one named",
       expected="bound: that very bundle uploaded and accepted; each broken binding: no upload at all and a report "
                "client_process_failed with the diagnostic runner_protocol_failed")
def _(ctx):
    def act(label, breaks):
        # Arrange
        plane = ctx.plane()
        res = plane.add_assignment(queued=False)
        planted = plant_completed(ctx, plane, res, breaks=breaks)
        # Act
        finish(plane, res)
        # Assert
        sent = uploads_of(res)
        if breaks is None:
            ctx.expect(res.resolution == "bundle_accepted" and sent and set(sent) == {planted},
                       expected="%s: the planted bundle (%s) uploaded and accepted" % (label, planted[:12]),
                       actual=lambda: "resolution %s, uploads %r (%s)" % (res.resolution, [s[:12] for s in sent],
                                                                         describe_run(plane)),
                       diagnosis="on restart, a completed terminal that won and is bound is adopted (SCAN-RUNNER-9), "
                                 "not scanned again")
            return
        failure, codes = report_codes(res)
        ctx.expect(not sent and failure == "client_process_failed" and "runner_protocol_failed" in codes,
                   expected="%s: no upload; a report client_process_failed with runner_protocol_failed" % label,
                   actual=lambda: "%d upload(s); report %r with %r (%s)" % (len(sent), failure, codes,
                                                                          describe_run(plane)),
                   diagnosis="adopt a completed outcome only when its terminal, identity, event tail and bundle "
                             "digest are bound to this generation and slot; otherwise report it")
    each_variant(ctx, [("bound", None), ("an outcome for another bundle_id", "identity"),
                       ("a terminal for another generation", "generation"),
                       ("a last_event_sequence beyond events.jsonl", "sequence"),
                       ("a bundle other than the one named", "digest")], act)


@check("runner.late-completion", clauses=["SCAN-RUNNER-5"], level="MUST",
       title="a completed terminal decided after its deadline, or for a generation already fenced, is never adopted",
       fakes="a slot state whose recorded generation published completed with a good bundle: decided_at after the "
             "scan deadline; or the record's status already fenced",
       expected="the planted bundle is never uploaded, and the reservation still ends (a report, or a new "
                "generation's bundle)")
def _(ctx):
    def act(label, options):
        # Arrange
        plane = ctx.plane()
        res = plane.add_assignment(queued=False)
        planted = plant_completed(ctx, plane, res, **options)
        # Act
        finish(plane, res)
        # Assert
        sent = uploads_of(res)
        ctx.expect(planted not in sent and res.resolution is not None,
                   expected="%s: the planted bundle (%s) never uploaded; the reservation resolved" % (
                       label, planted[:12]),
                   actual=lambda: "uploads %r, resolution %s (%s)" % ([s[:12] for s in sent], res.resolution,
                                                                     describe_run(plane)),
                   diagnosis="a completion that lost (late, or for a generation the worker closed) is never adopted")
    each_variant(ctx, [("decided after the scan deadline", {"late": True}),
                       ("for a generation recorded as fenced", {"status": "fenced"})], act)


# ------------------------------------------------------------------ SCAN-RUNNER-10 (and -6's failed outcome)
@check("runner.target-pins", clauses=["SCAN-RUNNER-10", "SCAN-RUNNER-6"], level="MUST",
       title="a target is fetched anonymously, never through a redirect, and must match its pins",
       fakes="a plain target (the control); a target whose sha256 pin is wrong; a 302 from the target to another "
             "object of the store; a %d MiB target pinned one byte longer than it is" % (MISMATCH_TARGET_BYTES >> 20),
       expected="the control: one GET without Authorization, the bundle accepted; each other: no upload, a report "
                "client_process_failed with runner_protocol_failed; the redirect's Location never fetched; the "
                "long target's body not read (less than half of it left the store)")
def _(ctx):
    def act(label, kind):
        # Arrange
        plane = ctx.plane()
        target = plane.add_target("pinned.txt", size=MISMATCH_TARGET_BYTES if kind == "size" else None,
                                  data=None if kind == "size" else b"pinned = 1\n", seed=7)
        other = plane.add_target("elsewhere.txt", b"never fetched\n")
        pin = dict(target)
        if kind == "sha256":
            pin["sha256"] = hashlib.sha256(b"other bytes").hexdigest()
        elif kind == "size":
            pin["size"] = target["size"] + 1
        elif kind == "redirect":
            plane.store.add_fault(faults.redirect(other["url"]), plane.target_match(target))
        res = plane.add_assignment(targets=[pin])
        # Act
        finish(plane, res)
        # Assert
        gets = target_gets(plane, target)
        if kind is None:
            auth = [e for e in gets if any(name.lower() in ("authorization", "cookie") for name, _v in e.headers)]
            ctx.expect(len(gets) == 1 and not auth and res.resolution == "bundle_accepted",
                       expected="%s: one GET with no Authorization or Cookie header; the bundle accepted" % label,
                       actual=lambda: "%d GET(s), %d with credentials; resolution %s" % (len(gets), len(auth),
                                                                                       res.resolution),
                       diagnosis="fetch a target with its pre-signed URL alone: the bearer token is the worker's")
            return
        failure, codes = report_codes(res)
        ctx.expect(not res.puts and failure == "client_process_failed" and "runner_protocol_failed" in codes,
                   expected="%s: no upload; a report client_process_failed with runner_protocol_failed" % label,
                   actual=lambda: "%d upload(s); report %r with %r (%s)" % (len(res.puts), failure, codes,
                                                                          describe_run(plane)),
                   diagnosis="a target that fails its pins fails the generation's outcome; nothing of it is uploaded")
        if kind == "redirect":
            fetched = target_gets(plane, other)
            ctx.expect(not fetched, expected="no GET of the redirect's Location",
                       actual="%d GET(s) of it" % len(fetched),
                       diagnosis="never follow a redirect: a 3xx fails the download")
        if kind == "size":
            sent = max([e.resp_bytes for e in gets] or [0])
            ctx.expect(sent < MISMATCH_TARGET_BYTES // 2,
                       expected="the body refused on its Content-Length: less than %d MiB of it sent"
                       % (MISMATCH_TARGET_BYTES >> 21), actual="%.1f MiB sent" % (sent / 1048576.0),
                       diagnosis="compare Content-Length with the pinned size before reading the body")
    each_variant(ctx, [("a plain target", None), ("a wrong sha256 pin", "sha256"),
                       ("a 302 to another object", "redirect"), ("a Content-Length other than the pin", "size")], act)


def peak_bytes(pid):
    """VmHWM of a process in bytes, or None."""
    raw = read_bytes("/proc/%d/status" % pid)
    for line in (raw or b"").decode("ascii", "replace").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return None


# How long the idle runner runs before its peak is read: enough to import the node and read its
# input on a loaded machine (it then only polls for its gate), and how often the check looks.
IDLE_RUNNER_SETTLE_S = 2.0
IDLE_RUNNER_POLL_S = 0.02


def idle_runner_peak(pid, root):
    """VmHWM of a runner that has read nothing: the live runner's own argv, environment and input.

    It is started on a copy of the live runner's root that holds only input.json,
    so it waits for a start gate that never comes; its VmHWM is read from /proc
    while it waits, then it is killed.  The interpreter, the node's code and the
    input cost the same in both runners; the target's bytes only in the live one.
    (A baseline read from the live runner itself would come too late: it may
    have read megabytes before the check looks.  wait4's ru_maxrss would not
    do either: it counts the harness's own pages from before the exec.)
    """
    argv = [a.decode("utf-8", "surrogateescape") for a in read_bytes("/proc/%d/cmdline" % pid).split(b"\0") if a]
    env = dict(e.decode("utf-8", "surrogateescape").split("=", 1)
               for e in read_bytes("/proc/%d/environ" % pid).split(b"\0") if b"=" in e)
    if "--root" not in argv:
        return None
    parent = tempfile.mkdtemp(prefix="idle-runner-")
    try:
        copy = os.path.join(parent, os.path.basename(root))
        os.mkdir(copy, 0o700)
        for name in ("bundle", os.path.join("bundle", "tmp"), os.path.join("bundle", "ready")):
            os.mkdir(os.path.join(copy, name), 0o700)
        shutil.copy2(os.path.join(root, "input.json"), os.path.join(copy, "input.json"))
        argv[argv.index("--root") + 1] = copy
        child = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        try:
            settle = Deadline(IDLE_RUNNER_SETTLE_S)
            while not settle.over() and child.poll() is None:
                time.sleep(IDLE_RUNNER_POLL_S)
            return peak_bytes(child.pid) if child.poll() is None else None
        finally:
            child.kill()
            child.wait()
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def unread_socket_bytes(pid):
    """Bytes the kernel holds for `pid`'s TCP sockets that the process has not read yet (None: unknown).

    What the store has *sent* says little: socket buffers absorb megabytes
    (receive buffers grow to 32 MiB here).  The runner has read everything sent
    once the receive queues of its own sockets are empty: /proc/PID/fd names
    their inodes, /proc/PID/net/tcp{,6} their rx_queue (hex, after the colon of
    the tx_queue:rx_queue column).
    """
    inodes = set()
    try:
        for name in os.listdir("/proc/%d/fd" % pid):
            try:
                link = os.readlink("/proc/%d/fd/%s" % (pid, name))
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[len("socket:["):-1])
    except OSError:
        return None
    total, found = 0, False
    for table in ("tcp", "tcp6"):
        raw = read_bytes("/proc/%d/net/%s" % (pid, table))
        for line in (raw or b"").decode("ascii", "replace").splitlines()[1:]:
            fields = line.split()
            if len(fields) > 9 and fields[9] in inodes:
                found = True
                total += int(fields[4].split(":")[1], 16)
    return total if found else None


# The large target's lines (a quarter of MAX_BUNDLE_LINE_BYTES: one scan piece each).
LARGE_LINE_BYTES = 16384


@check("runner.streamed", clauses=["SCAN-RUNNER-10"], level="MUST",
       title="a target is read as a stream: the runner's peak memory stays far below the target's size",
       fakes="no PID namespace; a %d MiB target whose first GET stalls %d MiB before its end" % (
           LARGE_TARGET_BYTES >> 20, LARGE_STALL_BEFORE_END >> 20),
       expected="once it has read %d MiB, the runner's VmHWM is less than %d MiB above an idle runner's" % (
           (LARGE_TARGET_BYTES - LARGE_STALL_BEFORE_END) >> 20, RUNNER_GROWTH_LIMIT_BYTES >> 20))
def _(ctx):
    # Arrange
    plane = ctx.plane()
    line = b"a" * (LARGE_LINE_BYTES - 1) + b"\n"  # long plain lines: quick to scan, so the check is quick
    target = plane.add_target("large.txt", chunks=(line for _n in range(LARGE_TARGET_BYTES // LARGE_LINE_BYTES)))
    plane.store.add_fault(faults.stall(LARGE_TARGET_BYTES - LARGE_STALL_BEFORE_END), plane.target_match(target))
    plane.add_assignment(targets=[target])
    # Act
    plane.start(pid1=False)
    record = wait_running(plane, target, 1)
    pid = record["identity"]["payload"]["pid"]
    plane.wait_for(lambda: max([e.resp_bytes for e in target_gets(plane, target)] or [0])
                   >= LARGE_TARGET_BYTES - LARGE_STALL_BEFORE_END, "the target sent up to its stall")
    # Judge what the runner did, not what the store sent: wait until it has read every byte the
    # kernel received for it (a runner that buffers the body holds them all by then).
    plane.wait_for(lambda: unread_socket_bytes(pid) == 0, "the runner read every byte its socket received")
    peak = peak_bytes(pid)
    before = idle_runner_peak(pid, os.path.join(plane.work_dir, record["root_name"]))
    ctx.note("VmHWM: %s bytes for a runner that did nothing, %s bytes for this one near the end" % (before, peak))
    plane.stop(signal.SIGINT)
    # Assert
    ctx.expect(None not in (before, peak) and peak - before < RUNNER_GROWTH_LIMIT_BYTES,
               expected="the runner's peak memory grows by less than %d MiB while it reads %d MiB" % (
                   RUNNER_GROWTH_LIMIT_BYTES >> 20, LARGE_TARGET_BYTES >> 20),
               actual="VmHWM %s idle, %s near the end" % tuple(
                   "%.1f MiB" % (v / 1048576.0) if v is not None else "unreadable" for v in (before, peak)),
               diagnosis="read a target in bounded chunks, hashing and scanning as it comes; never the whole body")
