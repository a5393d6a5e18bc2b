"""The child: what runs, with what, in which sandbox, and how its end is judged.

CRAWLER-CHILD-1..9. Every check here but two pins the harness's scripted
normaliser (conformance/planes/crawler_child.py) with MOSTLYRIGHT_CRAWLER_CHILD,
so that the child reports what the node gave it (argv, environment,
descriptors, session, /proc/self/status, probes of the seccomp filter, its
exact stdin) and misbehaves on cue (floods, sleeps, fails with a chosen stderr,
dies of a signal). child.argv also runs unpinned, and child.own-mode
(CRAWLER-CHILD-11) runs the node file in child mode itself: the protocol any
node's own normaliser keeps, whatever it makes of the rows. The reference's
rows are judged in norm.py (example work), the binding of a child's result in
result.py, a stop mid-child (CRAWLER-CHILD-10) in stop.py.

Where a check watches the child from outside (its pid, /proc/<pid>/limits), it
finds it with plane.child.pids(): host pids, so PID 1 mode still works.
"""

import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import time

from conformance import runner as _runner
from conformance.checks import check
from conformance.checks.crawler._common import (
    DEFAULT_SOURCE, SHORT_DEADLINE_S, PutRecorder, child_mode_input, docs, each_variant, expect_reported,
    expect_success, expect_untouched, run_child_mode)
from conformance.planes import crawler_child
from conformance.timeouts import NODE_RUN_TIMEOUT_S, POLL_INTERVAL_S, SHORT_TIMEOUT_S, Deadline

# The child protocol's argv tail (CRAWLER-CHILD-1).
CHILD_ARGS = ["--input-fd", "0", "--result-fd", "1"]

# CRAWLER-CHILD-3: a child whose node was killed must die "at once"; this is
# the time allowed for the kernel to deliver the parent-death signal and for
# the child to be scheduled to exit (the plane's CHILD_EXIT_GRACE_S too).
PDEATHSIG_BUDGET_S = 1.0

# A child that floods stdout or stderr must be killed at once (CRAWLER-CHILD-6):
# the run, start to exit, must end within FLOOD_PROMPT_S. The child timeout is
# set above it, so a node that leaves the killing to its deadline fails the
# time bound and names CRAWLER_CHILD_TIMEOUT, but still fails in seconds.
FLOOD_PROMPT_S = 8.0
FLOOD_CHILD_TIMEOUT_S = 10.0

# Peak RSS a flood of MAX_CRAWLER_RESULT_BYTES (8 MiB) on stdout may add to a
# normal run's: half the flood. A node that keeps the child's stdout in memory
# instead of a spool grows by the whole 8 MiB or more (CRAWLER-CHILD-6).
STDOUT_RSS_GROWTH_MAX_BYTES = 4 * 1024 * 1024

# How much earlier than its deadline a child's kill may be seen: the deadline
# starts before the fork, the harness sees the child only after its exec.
CHILD_START_ALLOWANCE_S = 0.5
# How much later than its deadline the bundle PUT may start: the kill, the
# reap and a loopback TLS connect (measured: a few milliseconds; the rest is
# room for a loaded machine).
CHILD_KILL_LATE_S = 1.5

# How long a child sleeps (its "seconds") when a check waits for the node to
# kill it: longer than any deadline under test, so only a kill ends it early,
# short enough that a node that never kills still fails within a minute.
SLEEPING_CHILD_S = 30

# CRAWLER-CHILD-7: a capability whose window ends this many seconds after the
# redemption leaves the child WINDOW_CAP_EXPIRES_S - UPLOAD_RESERVE_S (~7 s),
# enough for start-up and a small fetch, far below the child timeout (1800 s).
WINDOW_CAP_EXPIRES_S = 12
# Early and late slack around the expected kill (window end - UPLOAD_RESERVE_S):
# the window is computed in whole seconds (X-Goog-Date), the kill is followed
# by a reap and the bundle PUT's connect.
WINDOW_KILL_EARLY_S = 0.5
WINDOW_KILL_LATE_S = 1.5
# A window shorter than UPLOAD_RESERVE_S: no time for a fetch and a child.
WINDOW_INSUFFICIENT_EXPIRES_S = 4

# CRAWLER-CHILD-4: the sandbox observer sleeps this long after reading its
# input, so that /proc/<pid>/limits can be read from outside while it lives.
SANDBOX_OBSERVE_S = 1.0

def _line(code, status="failed"):
    """The child failure line of CRAWLER-CHILD-8, canonical, without its "\n"."""
    return docs.canonical({"code": code, "status": status}).decode("ascii")


# ---------------------------------------------------------------- helpers

def _record(ctx, plane, variant=None):
    """The scripted child's record, or a failure saying the child never ran."""
    record = plane.child.record()
    where = " (variant %s)" % variant if variant else ""
    ctx.expect(isinstance(record, dict), expected="the pinned child ran and wrote its record%s" % where,
               actual=lambda: "no record; %s" % _describe(plane),
               diagnosis="the node did not run MOSTLYRIGHT_CRAWLER_CHILD")
    return record


def _describe(plane):
    result = plane.result
    line = plane.status_line()
    return "exit %s, status line %s; %s" % (
        result.exit_code if result else None, "%s/%s" % line if line else repr(plane.stderr_text()[:200]),
        plane.describe_exchanges())


def _expect_bundle_only(ctx, plane, code, variant=None):
    """A bundle with `code` is the one object stored, through exactly one PUT."""
    expect_reported(ctx, plane, code, variant)
    puts = plane.puts()
    where = " (variant %s)" % variant if variant else ""
    ctx.expect(len(puts) == 1 and plane.stored_result() is None,
               expected="exactly one PUT, the failure bundle, and no result stored%s" % where,
               actual=lambda: "%d PUT(s); result stored: %s" % (len(puts), plane.stored_result() is not None),
               diagnosis="a refused child's stdout must never be uploaded")


def _state(pid):
    """'gone' (no such process), 'zombie' (dead, not reaped) or 'alive'."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            stat = handle.read()
    except OSError:
        return "gone"
    fields = stat[stat.rfind(")") + 2:].split()
    return "zombie" if fields and fields[0] in ("Z", "X") else "alive"


def _wait_for(condition, timeout, proc=None):
    """Poll condition() until true (returns True), timeout, or proc exits."""
    deadline = Deadline(timeout)
    while not deadline.over():
        if condition():
            return True
        if proc is not None and not proc.running():
            return condition()
        time.sleep(POLL_INTERVAL_S)
    return condition()


def _epoch(monotonic_t):
    """A time.monotonic() stamp as wall-clock seconds (the window is wall clock)."""
    return time.time() - (time.monotonic() - monotonic_t)


def _sandbox_expected():
    """Why this machine can install the CRAWLER-CHILD-4 sandbox, or None if it cannot tell."""
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "aarch64"):
        return None
    try:
        with open("/proc/self/status") as handle:
            if "Seccomp:" not in handle.read():
                return None
    except OSError:
        return None
    return "Linux %s with seccomp" % platform.machine()


def _require_sandbox(ctx):
    """SKIP where CRAWLER-CHILD-4 lets a node refuse to run any child (D16)."""
    if _sandbox_expected() is None:
        ctx.skip("this machine (%s %s) may lack the seccomp sandbox: CRAWLER_SANDBOX_UNAVAILABLE "
                 "would be conformant here" % (sys.platform, platform.machine()))


# ---------------------------------------------------------------- CRAWLER-CHILD-1

@check("child.argv", clauses=["CRAWLER-CHILD-1"], level="MUST",
       title="the pinned normaliser is run as [pin, --input-fd, 0, --result-fd, 1]; unpinned, "
             "the node file itself with -I -S",
       fakes="run 1: MOSTLYRIGHT_CRAWLER_CHILD pins the scripted child, which records its argv; "
             "run 2: no pin, the harness reads the node's descendants' command lines from /proc",
       expected="run 1: argv exactly [pin, --input-fd, 0, --result-fd, 1]; run 2: a child "
                "[<absolute python>, -I, -S, <node file>, --input-fd, 0, --result-fd, 1]; both succeed")
def _(ctx):
    # Arrange / Act: pinned
    plane = ctx.plane(child=crawler_child.reference_behaviour())
    plane.run()
    # Assert
    expect_success(ctx, plane)
    record = _record(ctx, plane)
    want = [plane.child.path] + CHILD_ARGS
    ctx.expect(record.get("argv") == want, expected="the pinned child's argv %s" % want,
               actual="argv %s" % record.get("argv"),
               diagnosis="a pin is run as itself with exactly the four protocol arguments")

    # Arrange / Act: unpinned (the node's own file in child mode, D8)
    if ctx.node.path is None:
        ctx.note("unpinned half skipped: the node is a command, not a file")
        return
    plane = ctx.plane()
    plane.start()
    seen = {}
    deadline = Deadline(NODE_RUN_TIMEOUT_S)
    while plane.proc.running() and not deadline.over():
        for pid in _runner.descendants(plane.proc.host_pid):
            argv = _runner.read_cmdline(pid)
            if argv:
                seen.setdefault(tuple(argv), pid)
        time.sleep(POLL_INTERVAL_S)
    plane.wait()
    node_argv = plane.result.cmdline_snapshot
    for pid, argv in (plane.result.seen_cmdlines or {}).items():
        if pid != plane.result.host_pid and argv:
            seen.setdefault(tuple(argv), pid)
    # Assert
    expect_success(ctx, plane)
    children = [list(argv) for argv in seen if list(argv) != node_argv]
    tail = ["-I", "-S", ctx.node.path] + CHILD_ARGS
    good = [argv for argv in children if argv[1:] == tail and os.path.isabs(argv[0])
            and os.path.exists(argv[0]) and os.path.samefile(argv[0], ctx.node.argv[0])]
    ctx.expect(bool(good), expected="unpinned, a child %s" % ([ctx.node.argv[0]] + tail),
               actual=lambda: "children seen: %s" % (children or "none"),
               diagnosis="without a pin the normaliser is this file under its own interpreter with -I -S, "
                         "never a program found on PATH")


@check("child.pin-invalid", clauses=["CRAWLER-CHILD-1"], level="MUST",
       title="a pin that is relative, missing, a directory or not executable is refused before the fetch",
       fakes="MOSTLYRIGHT_CRAWLER_CHILD = the scripted child by a relative path (it exists and is "
             "executable from the node's cwd), an absolute path that does not exist, a directory, "
             "the child's file with mode 0644",
       expected="each: CRAWLER_EXECUTABLE_UNAVAILABLE bundle, \"reported\", exit 0; no source request; "
                "the child never ran")
def _(ctx):
    pins = ctx.tmpdir("pins")
    executable = crawler_child.write_child(os.path.join(pins, "normaliser"), {"mode": "normal"})
    plain = crawler_child.write_child(os.path.join(pins, "plain"), {"mode": "normal"})
    os.chmod(plain, 0o644)
    variants = [
        ("relative", os.path.relpath(executable, os.getcwd())),
        ("missing", os.path.join(pins, "no-such-normaliser")),
        ("directory", pins),
        ("not executable", plain),
    ]

    def act(label, pin):
        # Arrange: the plane's own scripted child records; the pin names something else
        plane = ctx.plane(child=crawler_child.reference_behaviour(), extra_env={"MOSTLYRIGHT_CRAWLER_CHILD": pin})
        # Act
        plane.run()
        # Assert
        expect_reported(ctx, plane, "CRAWLER_EXECUTABLE_UNAVAILABLE", label)
        expect_untouched(ctx, plane, ("source",), label)
        ctx.expect(plane.child.record() is None, expected="no child ran (variant %s)" % label,
                   actual="the scripted child ran", diagnosis="an invalid pin must never be executed")

    each_variant(ctx, variants, act)


# ---------------------------------------------------------------- CRAWLER-CHILD-2, -3

@check("child.env", clauses=["CRAWLER-CHILD-2"], level="MUST",
       title="the child's environment is exactly the attestation and the five thread pins",
       fakes="the node's own environment holds PATH, LANG, TMPDIR, SSL_CERT_FILE, the bootstrap "
             "variables and a canary; the scripted child records /proc/self/environ",
       expected="exactly six variables: MOSTLYRIGHT_CRAWLER_EGRESS_POLICY_ATTESTATION = the request's "
                "attestation, and the five *_THREADS / JE_ARROW pins with their values")
def _(ctx):
    # Arrange
    plane = ctx.plane(child=crawler_child.reference_behaviour(),
                      extra_env={"CONFORMANCE_INHERITED_CANARY": "must-not-reach-the-child"})
    # Act
    plane.run()
    # Assert
    expect_success(ctx, plane)
    record = _record(ctx, plane)
    want = dict(docs.THREAD_PINS)
    want[docs.ATTESTATION_ENV] = plane.broker.request["egress_policy_attestation"]
    got = record.get("env") or {}
    extra = sorted(set(got) - set(want))
    missing = sorted(set(want) - set(got))
    wrong = sorted(name for name in set(want) & set(got) if got[name] != want[name])
    ctx.expect(got == want, expected="the child's environment exactly %s" % json.dumps(want, sort_keys=True),
               actual="inherited or extra: %s; missing: %s; wrong value: %s" % (
                   extra or "none", missing or "none", ["%s=%s" % (n, got[n]) for n in wrong] or "none"),
               diagnosis="the child's environment is built from nothing, never copied from the node's")


@check("child.fds-session", clauses=["CRAWLER-CHILD-3"], level="MUST",
       title="the child has only descriptors 0, 1, 2, leads its own session and group, and runs in /",
       fakes="the scripted child records /proc/self/fd, its pid, pgid, sid and cwd",
       expected="fds [0, 1, 2]; sid == pgid == pid; cwd \"/\"")
def _(ctx):
    # Arrange
    plane = ctx.plane(child=crawler_child.reference_behaviour())
    # Act
    plane.run()
    # Assert
    expect_success(ctx, plane)
    record = _record(ctx, plane)
    ctx.expect(record.get("fds") == [0, 1, 2], expected="open descriptors exactly [0, 1, 2]",
               actual="descriptors %s" % record.get("fds"),
               diagnosis="the node leaked descriptors (sockets, spool files) into the child: close the rest")
    pid = record.get("pid")
    ctx.expect(record.get("sid") == pid and record.get("pgid") == pid,
               expected="the child leads its session and process group (sid == pgid == pid)",
               actual="pid %s, pgid %s, sid %s" % (pid, record.get("pgid"), record.get("sid")),
               diagnosis="without its own group the node cannot kill the child's whole tree with killpg")
    ctx.expect(record.get("cwd") == "/", expected="working directory \"/\"", actual="cwd %r" % record.get("cwd"),
               diagnosis="start the child with cwd \"/\" (its working directory is never the node's)")


@check("child.pdeathsig", clauses=["CRAWLER-CHILD-3"], level="MUST",
       title="a child cannot outlive a node killed by SIGKILL (parent-death signal)",
       fakes="not PID 1 (as PID 1 the namespace would kill the child for the node); the scripted "
             "child sleeps; the harness SIGKILLs the node once the child has started",
       expected="the child is gone (or a zombie) within 1 s of the node's SIGKILL")
def _(ctx):
    # Arrange: pid1=False, or the PID namespace's end would kill the child whatever the node did
    plane = ctx.plane(child={"mode": "sleep", "seconds": SLEEPING_CHILD_S})
    plane.start(pid1=False)
    # Act
    recorded = lambda: plane.child.record() is not None  # noqa: E731 (the child is past its start-up)
    t_kill = plane.stop_when(recorded, signum=signal.SIGKILL, what="the child sleeping")
    plane.wait()
    record = _record(ctx, plane)
    pid = record.get("pid")
    # Assert
    gone = _wait_for(lambda: _state(pid) != "alive", max(0.0, t_kill + PDEATHSIG_BUDGET_S - time.monotonic()))
    if not gone:
        argv = _runner.read_cmdline(pid) or []
        if plane.child.path in argv:
            os.kill(pid, signal.SIGKILL)  # the node's leftover; reaped by whoever adopted it
            ctx.note("killed the leftover child pid %d" % pid)
    ctx.expect(gone, expected="the child (pid %s) dead within %.1f s of the node's SIGKILL" % (pid, PDEATHSIG_BUDGET_S),
               actual="still running %.1f s after the SIGKILL" % (time.monotonic() - t_kill),
               diagnosis="set PR_SET_PDEATHSIG to SIGKILL in the child before exec (and check the parent "
                         "did not die before it took effect)")


# ---------------------------------------------------------------- CRAWLER-CHILD-4

@check("child.sandbox", clauses=["CRAWLER-CHILD-4"], level="MUST",
       title="the child runs with seccomp filter mode, no_new_privs, RLIMIT_CORE 0; socket, fork "
             "and threads fail",
       fakes="the scripted child reads /proc/self/status, tries socket(), fork() and a thread, then "
             "sleeps 1 s (the harness reads /proc/<pid>/limits) and answers normally",
       expected="Seccomp 2, NoNewPrivs 1, each probe fails, core file size limit 0; the run succeeds")
def _(ctx):
    _require_sandbox(ctx)
    # Arrange
    plane = ctx.plane(child={"mode": "normal", "sleep_before": SANDBOX_OBSERVE_S})
    # Act
    plane.start()
    limits = {}

    def read_limits():
        for pid in plane.child.pids():
            try:
                with open("/proc/%d/limits" % pid) as handle:
                    text = handle.read()
            except OSError:
                continue
            for line in text.splitlines():
                if line.startswith("Max core file size"):
                    limits["core"] = line.split()[4:6]
                    return True
        return False

    _wait_for(read_limits, SHORT_TIMEOUT_S, plane.proc)
    plane.wait()
    # Assert
    expect_success(ctx, plane)
    record = _record(ctx, plane)
    status = record.get("status") or {}
    ctx.expect(status.get("Seccomp") == "2" and status.get("NoNewPrivs") == "1",
               expected="Seccomp: 2 and NoNewPrivs: 1 in the child's /proc/self/status",
               actual="Seccomp: %s, NoNewPrivs: %s" % (status.get("Seccomp"), status.get("NoNewPrivs")),
               diagnosis="set no_new_privs and install the seccomp filter before the child's program starts")
    probes = record.get("probes") or {}
    allowed = sorted(name for name in ("socket", "fork", "thread") if probes.get(name) in ("ok", None))
    ctx.expect(not allowed, expected="socket(), fork() and a new thread all fail in the child",
               actual="probes %s" % json.dumps(probes, sort_keys=True),
               diagnosis="the filter must deny %s" % ", ".join(allowed))
    ctx.expect(limits.get("core") == ["0", "0"], expected="RLIMIT_CORE 0 (soft and hard) in /proc/<child>/limits",
               actual="core file size %s" % (limits.get("core") or "not read: the child was not seen running"),
               diagnosis="setrlimit(RLIMIT_CORE, (0, 0)) before exec: a core dump would hold the source")


# Raw system calls the filter must answer (CRAWLER-CHILD-4), per machine:
# name -> (number, arguments). The arguments are harmless without the filter:
# each call fails with its own errno, so a sandboxed answer is told apart.
_SYSCALL_PROBES = {
    "x86_64": {
        "socket": (41, (2, 1, 0)),               # AF_INET, SOCK_STREAM: creation
        "connect": (42, (0, 0, 0)),              # on fd 0, a pipe: use (ENOTSOCK unfiltered)
        "socketpair": (53, (1, 1, 0, "pair")),   # AF_UNIX pair
        "clone": (56, (0x10000, 0, 0, 0, 0)),    # CLONE_THREAD alone: EINVAL unfiltered
        "clone3": (435, (0, 0)),                 # EINVAL unfiltered; must be ENOSYS
        "ptrace": (101, (3, "self", 0, 0)),      # PTRACE_PEEKUSER on itself: ESRCH unfiltered
        "io_uring_setup": (425, (0, 0)),         # EFAULT unfiltered
    },
    "aarch64": {
        "socket": (198, (2, 1, 0)),
        "connect": (203, (0, 0, 0)),
        "socketpair": (199, (1, 1, 0, "pair")),
        "clone": (220, (0x10000, 0, 0, 0, 0)),
        "clone3": (435, (0, 0)),
        "ptrace": (117, (3, "self", 0, 0)),
        "io_uring_setup": (425, (0, 0)),
    },
}

# The probe itself: runs unconfined in the harness (the baseline) and as the
# pinned child (under the node's sandbox), printing or recording
# {name: "ok" | errno name}.
_PROBE_CODE = r'''
import ctypes, errno, json, os
PROBES = json.loads(%(probes)r)
libc = ctypes.CDLL(None, use_errno=True)
pair = (ctypes.c_int * 2)()
def arg(value):
    if value == "pair":
        return ctypes.c_long(ctypes.addressof(pair))
    if value == "self":
        return ctypes.c_long(os.getpid())
    return ctypes.c_long(value)
def call(number, args):
    ctypes.set_errno(0)
    answer = libc.syscall(ctypes.c_long(number), *[arg(a) for a in args])
    if answer != -1:
        return "ok"
    code = ctypes.get_errno()
    return errno.errorcode.get(code, str(code))
RESULTS = dict((name, call(number, args)) for name, (number, args) in sorted(PROBES.items()))
'''

_PROBE_CHILD = r'''#!%(python)s -IS
# A syscall probe written by conformance/checks/crawler/child.py (child.sandbox-syscalls).
import json, os, sys
sys.path.insert(0, %(root)r)
%(code)s
with open(%(record)r + ".tmp", "w") as handle:
    json.dump(RESULTS, handle)
os.replace(%(record)r + ".tmp", %(record)r)
from conformance.planes.crawler_child import main
sys.exit(main({"mode": "normal"}))
'''


@check("child.sandbox-syscalls", clauses=["CRAWLER-CHILD-4"], level="MUST",
       title="the filter denies socket creation and use, clone, ptrace and io_uring_setup; clone3 is ENOSYS",
       fakes="a pinned probe calls raw socket, connect (on fd 0), socketpair, clone (invalid flags), "
             "clone3, ptrace (PEEKUSER on itself) and io_uring_setup, records the errno, then answers "
             "normally; the same probe runs unconfined in the harness as the baseline",
       expected="each call fails, with another answer than unconfined; clone3 fails with ENOSYS; the run succeeds")
def _(ctx):
    _require_sandbox(ctx)
    probes = _SYSCALL_PROBES[platform.machine()]
    code = _PROBE_CODE % {"probes": json.dumps(probes)}
    # Arrange: the baseline, unconfined
    baseline_run = subprocess.run([sys.executable, "-I", "-S", "-c", code + "\nprint(json.dumps(RESULTS))"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=SHORT_TIMEOUT_S)
    if baseline_run.returncode != 0:
        raise RuntimeError("the unconfined syscall probe failed: %s" % baseline_run.stderr.decode()[-300:])
    baseline = json.loads(baseline_run.stdout.decode())
    ctx.note("unconfined: %s" % json.dumps(baseline, sort_keys=True))
    record = os.path.join(ctx.tmpdir("probe"), "syscalls.json")
    pin = os.path.join(ctx.tmpdir("probe-bin"), "probe")
    with open(pin, "w") as handle:
        handle.write(_PROBE_CHILD % {"python": sys.executable, "root": crawler_child.ROOT, "code": code,
                                     "record": record})
    os.chmod(pin, 0o755)
    plane = ctx.plane(extra_env={"MOSTLYRIGHT_CRAWLER_CHILD": pin})
    # Act
    plane.run()
    # Assert
    expect_success(ctx, plane)
    ctx.expect(os.path.exists(record), expected="the probe child ran and recorded its answers",
               actual="no record; %s" % _describe(plane),
               diagnosis="run the normaliser named by MOSTLYRIGHT_CRAWLER_CHILD, as [<path>, --input-fd, 0, "
                         "--result-fd, 1], once the fetch is done")
    with open(record) as handle:
        sandboxed = json.load(handle)
    ctx.note("sandboxed: %s" % json.dumps(sandboxed, sort_keys=True))
    ctx.expect(sandboxed.get("clone3") == "ENOSYS", expected="clone3 fails with ENOSYS (libc then falls back "
               "to clone, which is denied)", actual="clone3: %s" % sandboxed.get("clone3"),
               diagnosis="a filter that cannot inspect clone3's flags must answer ENOSYS, not allow it")
    unfiltered = sorted(name for name in probes if name != "clone3" and
                        (sandboxed.get(name) == "ok" or sandboxed.get(name) == baseline.get(name)))
    ctx.expect(not unfiltered, expected="every probed call denied by the filter",
               actual="; ".join("%s: %s (unconfined: %s)" % (name, sandboxed.get(name), baseline.get(name))
                                for name in unfiltered),
               diagnosis="the seccomp filter lets these system calls through")


# ---------------------------------------------------------------- CRAWLER-CHILD-5

@check("child.input", clauses=["CRAWLER-CHILD-5"], level="MUST",
       title="the child's stdin is exactly the canonical input header, \\n, and the fetched bytes",
       fakes="the request names a non-ASCII filename; the source answers with an ETag, a Last-Modified "
             "and a Content-Type with a parameter; the scripted child hashes everything it reads on stdin",
       expected="header == the harness's input header (request, request_digest, retrieval, clean_room), "
                "canonical; stdin SHA-256 and size == canonical(header) + \\n + the served bytes")
def _(ctx):
    # Arrange
    source = b"station,reading\nA,1\nB,2\n"
    # A non-ASCII filename: a header encoded with JSON's ASCII escapes is not canonical.
    plane = ctx.plane(source=source, source_content_type="Text/CSV; charset=utf-8", source_etag='"v7-abc"',
                      source_last_modified="Tue, 03 Nov 2026 10:00:00 GMT", filename="relevés-été.csv",
                      child=crawler_child.reference_behaviour())
    # Act
    plane.run()
    # Assert
    expect_success(ctx, plane)
    record = _record(ctx, plane)
    evidence, exact = plane.transport_evidence()
    if not exact:
        raise RuntimeError("the harness could not rebuild the transport evidence exactly")
    request = plane.broker.request
    want = docs.input_header(request, docs.make_retrieval(request["query"]["url"], evidence), docs.clean_room())
    got = record.get("header")
    differing = sorted(k for k in set(want) | set(got or {}) if (got or {}).get(k) != want.get(k))
    if "retrieval" in differing and isinstance(got.get("retrieval"), dict):
        differing.remove("retrieval")
        differing += ["retrieval.%s" % k for k in sorted(set(want["retrieval"]) | set(got["retrieval"]))
                      if got["retrieval"].get(k) != want["retrieval"].get(k)]
    ctx.expect(got == want, expected="the normalisation input header the harness builds from its request and fetch",
               actual=lambda: "differs at %s: %s" % (", ".join(differing) or "(shape)",
                                                     "; ".join("%s: expected %s, got %s" % (
                                                         k, json.dumps(_at(want, k))[:120], json.dumps(_at(got, k))[:120])
                                                         for k in differing[:4])),
               diagnosis="the child must be told exactly what was fetched, and nothing else")
    ctx.expect(record.get("header_canonical") is True, expected="the header line in canonical JSON",
               actual="not canonical (or not parsed: %s)" % record.get("header_error"),
               diagnosis="write the header line as canonical JSON (sorted keys, no spaces, the contract's escaping), "
                         "then a newline, then the source")
    wire = docs.canonical(want) + b"\n" + source
    ctx.expect(record.get("stdin_sha256") == hashlib.sha256(wire).hexdigest() and record.get("stdin_size") == len(wire),
               expected="stdin exactly the %d bytes canonical(header) + \\n + the source" % len(wire),
               actual="stdin %s bytes (sha256 %s...); raw part %s bytes" % (
                   record.get("stdin_size"), str(record.get("stdin_sha256"))[:12], record.get("raw_size")),
               diagnosis="after the header comes exactly raw_size_bytes of the spooled source, then EOF")


def _at(document, dotted):
    for key in dotted.split("."):
        document = document.get(key) if isinstance(document, dict) else None
    return document


# ---------------------------------------------------------------- CRAWLER-CHILD-6

@check("child.stdout-bound", clauses=["CRAWLER-CHILD-6"], level="MUST",
       title="a child flooding stdout is killed past 8 MiB, spooled not held: CRAWLER_CHILD_INVALID",
       fakes="run 1: the scripted child answers normally (peak RSS baseline); run 2: it writes to "
             "stdout forever; child timeout %.0f s" % FLOOD_CHILD_TIMEOUT_S,
       expected="run 2: CRAWLER_CHILD_INVALID bundle, exit 0, within %.0f s; peak RSS at most %d MiB above "
                "run 1's" % (FLOOD_PROMPT_S, STDOUT_RSS_GROWTH_MAX_BYTES >> 20))
def _(ctx):
    # Arrange / Act: the baseline
    plane = ctx.plane(child=crawler_child.reference_behaviour(), timeouts={"child": FLOOD_CHILD_TIMEOUT_S})
    plane.run()
    expect_success(ctx, plane)
    baseline_rss = plane.result.maxrss_bytes
    # Arrange / Act: the flood
    plane = ctx.plane(child={"mode": "flood"}, timeouts={"child": FLOOD_CHILD_TIMEOUT_S})
    plane.run()
    # Assert
    _expect_bundle_only(ctx, plane, "CRAWLER_CHILD_INVALID")
    ctx.expect(plane.result.wall_s <= FLOOD_PROMPT_S, expected="the run over within %.0f s" % FLOOD_PROMPT_S,
               actual="%.1f s" % plane.result.wall_s,
               diagnosis="kill the child's group as soon as its stdout passes MAX_CRAWLER_RESULT_BYTES")
    if baseline_rss and plane.result.maxrss_bytes:
        growth = plane.result.maxrss_bytes - baseline_rss
        ctx.expect(growth <= STDOUT_RSS_GROWTH_MAX_BYTES,
                   expected="peak RSS at most %d MiB above a normal run's" % (STDOUT_RSS_GROWTH_MAX_BYTES >> 20),
                   actual="%.1f MiB above (%.1f vs %.1f MiB)" % (growth / 1048576.0, plane.result.maxrss_bytes
                                                                  / 1048576.0, baseline_rss / 1048576.0),
                   diagnosis="the child's stdout goes to a spool file as it arrives, not into memory")
    else:
        ctx.note("peak RSS not reported by the runner: memory bound not judged")


@check("child.stderr-bound", clauses=["CRAWLER-CHILD-6", "CRAWLER-CHILD-8"], level="MUST",
       title="a child flooding stderr is killed at once: CRAWLER_CHILD_FAILED",
       fakes="the scripted child writes to stderr forever; child timeout %.0f s" % FLOOD_CHILD_TIMEOUT_S,
       expected="CRAWLER_CHILD_FAILED bundle, exit 0, within %.0f s" % FLOOD_PROMPT_S)
def _(ctx):
    # Arrange
    plane = ctx.plane(child={"mode": "flood-stderr"}, timeouts={"child": FLOOD_CHILD_TIMEOUT_S})
    # Act
    plane.run()
    # Assert
    _expect_bundle_only(ctx, plane, "CRAWLER_CHILD_FAILED")
    ctx.expect(plane.result.wall_s <= FLOOD_PROMPT_S, expected="the run over within %.0f s" % FLOOD_PROMPT_S,
               actual="%.1f s" % plane.result.wall_s,
               diagnosis="kill the child's group once its stderr passes MAX_CHILD_STDERR_BYTES + 1")


# ---------------------------------------------------------------- CRAWLER-CHILD-7

def _watch_child_until_put(plane, wait_s):
    """Run the started node to its end, watching: the child's host pid and
    when it was first seen, when the first PUT began and the child's state at
    that moment. Returns (pid, t_seen, t_put, state_at_put).

    The state is taken by the store as the PUT's head arrives (a poll could
    miss a PUT the node sends and finishes between two looks)."""
    seen = {}
    recorder = PutRecorder(plane, observe=lambda: _state(seen["pid"]) if "pid" in seen else None)
    deadline = Deadline(wait_s)
    while plane.proc.running() and not deadline.over() and not recorder.observed:
        if "pid" not in seen:
            found = plane.child.pids()
            if found:
                seen["pid"], seen["t"] = found[0], time.monotonic()
        time.sleep(POLL_INTERVAL_S)
    plane.wait()
    puts = plane.puts()
    t_put = min(ex.t_start for ex in puts) if puts else None
    state_at_put = recorder.observed[0] if recorder.observed else None
    return seen.get("pid"), seen.get("t"), t_put, state_at_put


@check("child.timeout", clauses=["CRAWLER-CHILD-7"], level="MUST",
       title="a child past the child timeout is killed and reaped, then CRAWLER_CHILD_TIMEOUT is reported",
       fakes="the scripted child sleeps %d s; MOSTLYRIGHT_CRAWLER_CHILD_TIMEOUT_S=%s" % (
           SLEEPING_CHILD_S, SHORT_DEADLINE_S),
       expected="the child gone (reaped, not a zombie) when the bundle PUT starts, %.0f s after the child "
                "started (-%.2f/+%.2f s); CRAWLER_CHILD_TIMEOUT bundle, exit 0" % (
                    SHORT_DEADLINE_S, CHILD_START_ALLOWANCE_S, CHILD_KILL_LATE_S))
def _(ctx):
    # Arrange
    plane = ctx.plane(child={"mode": "sleep", "seconds": SLEEPING_CHILD_S}, timeouts={"child": SHORT_DEADLINE_S})
    # Act
    plane.start()
    pid, t_seen, t_put, state_at_put = _watch_child_until_put(plane, SLEEPING_CHILD_S)
    # Assert
    _expect_bundle_only(ctx, plane, "CRAWLER_CHILD_TIMEOUT")
    ctx.expect(pid is not None and t_put is not None, expected="the child seen running, then a PUT",
               actual="child pid %s, PUT seen: %s" % (pid, t_put is not None),
               diagnosis="start the normaliser child once the fetch is done" if pid is None else
               "when the child's deadline passes, kill it and report CRAWLER_CHILD_TIMEOUT with a bundle PUT")
    ctx.expect(state_at_put == "gone", expected="the child killed and reaped before the bundle PUT",
               actual="the child was %s when the PUT started" % state_at_put,
               diagnosis="on the deadline, kill the child's process group and wait for it before reporting")
    ran = t_put - t_seen
    ctx.note("bundle PUT %.3f s after the child was first seen" % ran)
    ctx.expect(SHORT_DEADLINE_S - CHILD_START_ALLOWANCE_S <= ran <= SHORT_DEADLINE_S + CHILD_KILL_LATE_S,
               expected="the child killed %.1f s after it started (between %.2f and %.2f s)" % (
                   SHORT_DEADLINE_S, SHORT_DEADLINE_S - CHILD_START_ALLOWANCE_S, SHORT_DEADLINE_S + CHILD_KILL_LATE_S),
               actual="the bundle PUT began %.2f s after the child was seen" % ran,
               diagnosis="the child's deadline is MOSTLYRIGHT_CRAWLER_CHILD_TIMEOUT_S, elapsed from its start")


@check("child.window-cap", clauses=["CRAWLER-CHILD-7", "CRAWLER-CAP-8"], level="MUST",
       title="the child's deadline is capped by the upload window less UPLOAD_RESERVE_S",
       fakes="the capability's window ends %d s after the redemption (X-Goog-Expires and expires_at); "
             "child timeout left at its default; the scripted child sleeps %d s" % (
                 WINDOW_CAP_EXPIRES_S, SLEEPING_CHILD_S),
       expected="the child killed at window end - %d s (from %.1f s before to %.1f s after); "
                "CRAWLER_CHILD_TIMEOUT bundle stored inside the window, exit 0" % (
                    docs.UPLOAD_RESERVE_S, WINDOW_KILL_EARLY_S, WINDOW_KILL_LATE_S))
def _(ctx):
    # Arrange
    plane = ctx.plane(child={"mode": "sleep", "seconds": SLEEPING_CHILD_S}, url_expires_s=WINDOW_CAP_EXPIRES_S)
    # Act
    plane.start()
    _pid, _t_seen, t_put, _state_at_put = _watch_child_until_put(plane, SLEEPING_CHILD_S)
    # Assert
    _expect_bundle_only(ctx, plane, "CRAWLER_CHILD_TIMEOUT")
    window_end = plane.broker.issued_at + WINDOW_CAP_EXPIRES_S
    kill_at = window_end - docs.UPLOAD_RESERVE_S
    put_epoch = _epoch(t_put)
    ctx.note("bundle PUT %.3f s before the window's end (expected %d s)" % (window_end - put_epoch, docs.UPLOAD_RESERVE_S))
    ctx.expect(kill_at - WINDOW_KILL_EARLY_S <= put_epoch <= kill_at + WINDOW_KILL_LATE_S,
               expected="the bundle PUT about %d s before the window's end" % docs.UPLOAD_RESERVE_S,
               actual="%.2f s before the window's end" % (window_end - put_epoch),
               diagnosis="the child runs at most min(child timeout, window end - now - UPLOAD_RESERVE_S)")


@check("child.window-insufficient", clauses=["CRAWLER-CHILD-7", "CRAWLER-CAP-8"], level="MUST",
       title="a window shorter than UPLOAD_RESERVE_S: CRAWLER_UPLOAD_WINDOW_INSUFFICIENT before the fetch",
       fakes="variants: the URL and expires_at both end %d s after the redemption; the URL is good for "
             "900 s but expires_at ends in %d s (the window is the earlier)" % (
                 WINDOW_INSUFFICIENT_EXPIRES_S, WINDOW_INSUFFICIENT_EXPIRES_S),
       expected="each: CRAWLER_UPLOAD_WINDOW_INSUFFICIENT bundle, exit 0; no source request; no child")
def _(ctx):
    variants = [
        ("URL and expires_at", {"url_expires_s": WINDOW_INSUFFICIENT_EXPIRES_S}),
        ("expires_at only", {"expires_in_s": WINDOW_INSUFFICIENT_EXPIRES_S}),
    ]

    def act(label, options):
        # Arrange
        plane = ctx.plane(child=crawler_child.reference_behaviour(), **options)
        # Act
        plane.run()
        # Assert
        _expect_bundle_only(ctx, plane, "CRAWLER_UPLOAD_WINDOW_INSUFFICIENT", label)
        expect_untouched(ctx, plane, ("source",), label)
        ctx.expect(plane.child.record() is None, expected="no child started (variant %s)" % label,
                   actual="the child ran",
                   diagnosis="check the upload window before the fetch: when it is shorter than UPLOAD_RESERVE_S, "
                             "report CRAWLER_UPLOAD_WINDOW_INSUFFICIENT without starting the child")

    each_variant(ctx, variants, act)


# ---------------------------------------------------------------- CRAWLER-CHILD-8, -9

@check("child.admitted-code", clauses=["CRAWLER-CHILD-8"], level="MUST",
       title="a failing child's canonical line names one of the child codes (CHILD_CODES), with or without one \\n",
       fakes="the scripted child writes {\"code\":X,\"status\":\"failed\"} (X each of the deployed child codes), "
             "with and without a trailing \\n, and exits 1; once with exit 7",
       expected="each: a bundle with X, \"reported\", exit 0")
def _(ctx):
    variants = []
    for code in sorted(docs.CHILD_FAILURE_CODES):
        variants.append(("%s with \\n" % code, (code, _line(code) + "\n", 1)))
        variants.append(("%s without \\n" % code, (code, _line(code), 1)))
    first = sorted(docs.CHILD_FAILURE_CODES)[0]
    variants.append(("exit 7", (first, _line(first) + "\n", 7)))

    def act(label, value):
        code, stderr, exit_status = value
        # Arrange
        plane = ctx.plane(child={"mode": "fail", "stderr": stderr, "exit": exit_status})
        # Act
        plane.run()
        # Assert
        _expect_bundle_only(ctx, plane, code, label)

    each_variant(ctx, variants, act)


@check("child.refused-code", clauses=["CRAWLER-CHILD-8"], level="MUST",
       title="any other stderr from a failing child is CRAWLER_CHILD_FAILED, and its text goes nowhere",
       fakes="the scripted child exits 1 after writing: a code outside the child set, an unknown code "
             "carrying a marker, an extra key, status \"error\", over 512 bytes, spaced JSON, unsorted "
             "keys, two lines, invalid UTF-8, nothing, only whitespace, one line padded with spaces past 512 "
             "bytes (whitespace around one line is stripped: peer area)",
       expected="each: CRAWLER_CHILD_FAILED bundle, exit 0; the marker in no stored object and not on stderr")
def _(ctx):
    marker = "CANARYCHILD%032x" % ctx.rng.getrandbits(128)
    good = _line("CRAWLER_NORMALIZATION_FAILED")
    outside = ("CRAWLER_SOURCE_TOO_LARGE" if "CRAWLER_SOURCE_TOO_LARGE" not in docs.CHILD_FAILURE_CODES
               else sorted(docs.FAILURE_VOCABULARY - docs.CHILD_FAILURE_CODES - {"CRAWLER_CHILD_FAILED"})[0])
    variants = [
        ("code outside the child set (%s)" % outside, _line(outside) + "\n"),
        ("unknown code with a marker", _line("CRAWLER_" + marker) + "\n"),
        ("extra key", docs.canonical({"code": "CRAWLER_NORMALIZATION_FAILED", "detail": marker,
                                      "status": "failed"}).decode("ascii") + "\n"),
        ("status error", _line("CRAWLER_NORMALIZATION_FAILED", "error") + "\n"),
        ("over 512 bytes", good + "\n" + (marker + " ") * (600 // (len(marker) + 1) + 1)),
        ("spaced", json.dumps({"code": "CRAWLER_NORMALIZATION_FAILED", "status": "failed"}, sort_keys=True) + "\n"),
        ("unsorted keys", '{"status":"failed","code":"CRAWLER_NORMALIZATION_FAILED"}\n'),
        ("two lines", good + "\n" + good + "\n"),
        ("invalid UTF-8", good.replace("FAILED\"", "FAILED\udcff\"", 1) + "\n"),
        ("nothing", ""),
        ("only whitespace", " \n\t\r\n"),
        # The bound is on what the child wrote, before any whitespace is stripped (as upstream).
        ("one line padded with spaces past 512 bytes", good + " " * 600 + "\n"),
    ]

    def act(label, stderr):
        # Arrange
        plane = ctx.plane(child={"mode": "fail", "stderr": stderr, "exit": 1})
        # Act
        plane.run()
        # Assert
        _expect_bundle_only(ctx, plane, "CRAWLER_CHILD_FAILED", label)
        places = [("the node's stderr", plane.result.stderr), ("the node's stdout", plane.result.stdout)]
        places += [("stored object %s" % key.rsplit("/", 1)[-1][:12], item.raw.decode("utf-8", "replace"))
                   for key, item in plane.stored().items()]
        leaked = [where for where, text in places if marker in (text or "")]
        ctx.expect(not leaked, expected="the child's text nowhere outside the node (variant %s)" % label,
                   actual="the child's marker appears in %s" % ", ".join(leaked),
                   diagnosis="only a code leaves the node (CRAWLER-CHILD-8, CRAWLER-REPORT-6)")

    each_variant(ctx, variants, act)


@check("child.signal", clauses=["CRAWLER-CHILD-8"], level="MUST",
       title="a child killed by a signal is CRAWLER_CHILD_FAILED",
       fakes="the scripted child reads its input and raises SIGSEGV on itself, writing nothing",
       expected="CRAWLER_CHILD_FAILED bundle, exit 0")
def _(ctx):
    # Arrange
    plane = ctx.plane(child={"mode": "segv"})
    # Act
    plane.run()
    # Assert
    _expect_bundle_only(ctx, plane, "CRAWLER_CHILD_FAILED")


@check("child.exit0-stderr", clauses=["CRAWLER-CHILD-9"], level="MUST",
       title="a child that exits 0 but writes anything on stderr is CRAWLER_CHILD_INVALID",
       fakes="the scripted child writes a valid result and exits 0, with stderr: one byte; a newline; "
             "an admissible failure line",
       expected="each: CRAWLER_CHILD_INVALID bundle, exit 0; the result not stored")
def _(ctx):
    variants = [
        ("one byte", "x"),
        ("a newline", "\n"),
        ("an admissible failure line", _line("CRAWLER_LIMIT_EXCEEDED") + "\n"),
    ]

    def act(label, stderr):
        # Arrange
        plane = ctx.plane(child={"mode": "normal", "stderr": stderr, "exit": 0})
        # Act
        plane.run()
        # Assert
        _expect_bundle_only(ctx, plane, "CRAWLER_CHILD_INVALID", label)

    each_variant(ctx, variants, act)


@check("child.empty", clauses=["CRAWLER-CHILD-9"], level="MUST",
       title="a child that exits 0 with nothing on stdout is CRAWLER_CHILD_INVALID",
       fakes="the scripted child reads its input and exits 0 silently",
       expected="CRAWLER_CHILD_INVALID bundle, exit 0; one PUT")
def _(ctx):
    # Arrange
    plane = ctx.plane(child={"mode": "empty"})
    # Act
    plane.run()
    # Assert
    _expect_bundle_only(ctx, plane, "CRAWLER_CHILD_INVALID")


# ---------------------------------------------------------------- CRAWLER-CHILD-11

@check("child.own-mode", clauses=["CRAWLER-CHILD-11"], level="MUST",
       title="the node file in child mode writes one result that keeps every binding rule and exits 0, or "
             "one admissible failure line and exits 1",
       fakes="the harness runs [python, -I, -S, <node file>, --input-fd, 0, --result-fd, 1] itself with the "
             "six child variables, on the plane's small CSV source: as served; under max_normalized_bytes 1; "
             "with a header whose raw_content_sha256 is another's; with one byte more than raw_size_bytes",
       expected="as served: exit 0, empty stderr, stdout a canonical result for that input (everything the "
                "header gives restated, the content of CRAWLER-RESULT-10 and its summary read off it); "
                "max_normalized_bytes 1: exit 1, empty stdout, the CRAWLER_LIMIT_EXCEEDED line; the other two: "
                "exit 1, empty stdout, the CRAWLER_NORMALIZATION_FAILED line")
def _(ctx):
    # Arrange / Act: the source as served (the one source a node's own normaliser is expected to accept)
    header, _request = child_mode_input(DEFAULT_SOURCE)
    run = run_child_mode(ctx, header, DEFAULT_SOURCE)
    # Assert
    ctx.expect(run.returncode == 0 and run.stderr == b"" and run.stdout,
               expected="exit 0, a result on stdout and nothing on stderr",
               actual="exit %d, %d bytes stdout, stderr %r" % (run.returncode, len(run.stdout), run.stderr[:200]),
               diagnosis="the node's own normaliser refused the harness's small CSV table, or its child mode does "
                         "not keep the protocol")
    problems = docs.result_problems(run.stdout, header)
    ctx.expect(not problems, expected="a result the node would accept for this input (CRAWLER-RESULT-*)",
               actual=lambda: "; ".join(problems[:4]),
               diagnosis="the framing in section 6.7 builds the result from what normalize() yields: restate the "
                         "header, encode the rows as CRAWLER-RESULT-10's JSON lines, read the summary off them")

    limits = docs.default_limits()
    limits["max_normalized_bytes"] = 1
    over, _request = child_mode_input(DEFAULT_SOURCE, limits=limits)
    other_hash, _request = child_mode_input(DEFAULT_SOURCE, raw_sha256=docs.sha256_hex(DEFAULT_SOURCE + b"x"))
    refusals = [
        ("max_normalized_bytes 1", (over, DEFAULT_SOURCE, "CRAWLER_LIMIT_EXCEEDED")),
        ("raw_content_sha256 of other bytes", (other_hash, DEFAULT_SOURCE, "CRAWLER_NORMALIZATION_FAILED")),
        ("one byte more than raw_size_bytes", (header, DEFAULT_SOURCE + b"x", "CRAWLER_NORMALIZATION_FAILED")),
    ]
    for label, (input_header, raw, code) in refusals:
        # Arrange / Act
        ctx.note("variant: %s" % label)
        run = run_child_mode(ctx, input_header, raw)
        # Assert
        line = docs.canonical({"code": code, "status": "failed"})
        ctx.expect(run.returncode == 1 and run.stdout == b"" and run.stderr in (line, line + b"\n"),
                   expected="exit 1, empty stdout, stderr %s (variant %s)" % (line.decode(), label),
                   actual="exit %d, %d bytes stdout, stderr %r" % (run.returncode, len(run.stdout),
                                                                   run.stderr[:200]),
                   diagnosis="content over a limit is CRAWLER_LIMIT_EXCEEDED and an input whose bytes do not "
                             "match its header CRAWLER_NORMALIZATION_FAILED, each one failure line and exit 1")
