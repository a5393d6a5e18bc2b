"""What several scan check modules share: describing a run, expecting no request, timing."""

from conformance import faults  # noqa: F401 (re-exported for the check modules)
from conformance.checks import stops
from conformance.checks.variants import each_variant  # noqa: F401 (re-exported)
from conformance.planes.scan import PHASE_TIMEOUT_S, RUN_TIMEOUT_S  # noqa: F401 (re-exported)

# How late a wait the node schedules may come on a loaded 2-core machine (an interpreter
# start, a thread that was not scheduled): every timing bound a check applies adds it.
SCHEDULE_SLACK_S = 1.0


# SCAN-STOP-2, -3: what the worker prints when a stop signal reaches its handler.
DRAINING_LINE, STOPPING_LINE = "worker: draining", "worker: stopping"


def stop_unnoticed(result, signum=None):
    """The diagnosis "no handler ran", when a life the harness signalled shows no
    sign of it: neither 'worker: draining' nor 'worker: stopping' on stdout after
    the signal, and no exit of its own (it was killed at the harness's timeout).
    None when it shows one, or no signal was sent."""
    if result is None or not result.signals:
        return None
    t_signal = result.signals[0][0]
    said = any(t >= t_signal and line in (DRAINING_LINE, STOPPING_LINE) for t, line in result.stdout_lines)
    noticed = said or not (result.timed_out or result.killed)
    return stops.unnoticed(result, noticed, "no '%s' or '%s' line after the signal, and it ran on"
                           % (DRAINING_LINE, STOPPING_LINE), signum=signum)


# What a worker that does not end a drain with exit 0 most likely does wrong (SCAN-STOP-2), when
# the run shows it noticed the SIGTERM (stop_unnoticed says so otherwise).
DRAIN_EXIT = ("the first SIGTERM drains: start no new claim, finish what the slots hold, flush the progress "
              "journal and exit 0 (EXIT_OK)")


def drain_diagnosis(result):
    """The diagnosis of a drain that did not end with exit 0, read off the life's result."""
    return lambda: stop_unnoticed(result) or DRAIN_EXIT


def describe_run(plane, limit=12):
    """One line for an Actual: what the server saw, and how each life ended."""
    return plane.describe(limit)


def calls(plane, verb, reservation=None, since=None):
    return plane.server.calls(verb, reservation=reservation, since=since)


# ---------------------------------------------------------------------------------------------
# Group G2 (CLAIM, ASSIGN, BACKOFF, SLOT): when a request began and when its answer did, so a
# wait the node scheduled after an answer can be measured from outside.

# The two readings of one monotonic clock that bound a measured wait are rounded apart by at
# most this: a lower bound on a wait allows it.
CLOCK_EPSILON_S = 0.005


def began(plane, call):
    """When the node began this request: the accept time of its connection when it is the
    connection's first request, else its arrival (a kept connection, D37). Measuring a wait up to
    here can only add the node's own latency to it, never take from it."""
    ex = call.exchange
    first = min((other.seq for other in plane.server.transcript if other.conn_id == ex.conn_id), default=ex.seq)
    if first != ex.seq:
        return ex.t_start
    for record in plane.server.connections:
        if record.conn_id == ex.conn_id:
            return min(record.t_accept, ex.t_start)
    return ex.t_start


def answered_at(call):
    """When the answer of this request began to be sent (or its exchange ended, if never answered)."""
    ex = call.exchange
    return ex.t_answer if ex.t_answer is not None else (ex.t_end if ex.t_end is not None else ex.t_start)


def wait_between(plane, earlier, later):
    """Seconds from the start of earlier's answer to the moment later began."""
    return began(plane, later) - answered_at(earlier)


def runner_roots(plane):
    """Runner roots in the work tree (abandoned/ included): a runner was made for each."""
    names = [n for n in plane.listing("work") if n.startswith("worker-assignment-")]
    return names + ["abandoned/" + n for n in plane.listing("work", "abandoned") if n.startswith("worker-assignment-")]


# ---- G1: start-up, transport and secrets (argv, config, token, http, secret, output) ----
import os as _g1_os  # noqa: E402 (this block is appended; the module's imports above stay as they are)

# SCAN-ARGV-1: a usage error exits with this status.
EXIT_USAGE = 64
# A value no usage line may repeat: distinctive, so a hit can only be an echo of argv or the environment.
CANARY = "CANARYg1d4e7b9c2"


def run_to_exit(plane, argv=None, env=None, **argv_options):
    """Start one life (argv: the whole option list, else plane.argv(**argv_options); env: updates to
    the plane's environment) and wait for its exit; its RunResult."""
    life = plane.start(argv=argv, env=env, **argv_options)
    return life.wait(RUN_TIMEOUT_S)


def argv_without_token_file(plane, **argv_options):
    """plane.argv() with the --token-file option and its value left out."""
    args = plane.argv(**argv_options)
    at = args.index("--token-file")
    return args[:at] + args[at + 2:]


def tree_entries(plane):
    """Every path under the plane's XDG_STATE_HOME and XDG_DATA_HOME (a usage error writes none)."""
    found = []
    for root in (plane.state_home, plane.data_home):
        for top, dirs, names in _g1_os.walk(root):
            found += [_g1_os.path.relpath(_g1_os.path.join(top, n), root) for n in dirs + names]
    return found


def expect_usage(ctx, plane, result, label, names, hidden=(CANARY,)):
    """SCAN-ARGV-1, SCAN-CONFIG-1: exit 64, one stderr line naming one of names and none of hidden,
    nothing on stdout, no connection to any fake, nothing in the trees."""
    stderr = [line for line in (result.stderr or "").split("\n") if line.strip()]
    ctx.expect(result.exit_code == EXIT_USAGE,
               expected="%s: exit %d (EXIT_USAGE)" % (label, EXIT_USAGE),
               actual="exit %s (stderr %r)" % (result.exit_code, (result.stderr or "")[-200:]),
               diagnosis="a bad command line or configuration is a usage error, never 2 (the forced stop's status)")
    ctx.expect(len(stderr) == 1,
               expected="%s: exactly one line on stderr" % label,
               actual="%d line(s): %r" % (len(stderr), stderr[:3]),
               diagnosis="a usage error is one line, with no traceback and no help text")
    ctx.expect(any(name in stderr[0] for name in names),
               expected="%s: the stderr line names %s" % (label, " or ".join(names)),
               actual="it was %r" % stderr[0],
               diagnosis="say which option or variable is wrong, so the operator can fix it")
    shown = [value for value in hidden if value and (value in (result.stderr or "") or value in (result.stdout or ""))]
    ctx.expect(not shown,
               expected="%s: no output repeats the value given" % label,
               actual="the value %r was repeated (stderr %r)" % (shown[:1], stderr[:1]),
               diagnosis="a value on argv or in the environment may be a secret: name the option, never its value")
    ctx.expect(not (result.stdout or "").strip(),
               expected="%s: nothing on stdout" % label, actual="stdout %r" % (result.stdout or "")[:200],
               diagnosis="a usage error prints its one line on stderr and nothing on stdout")
    touched = plane.server.server.connections + plane.tripwire.connections
    ctx.expect(not touched and not plane.server.calls(),
               expected="%s: no connection to the scan server or any proxy" % label,
               actual=describe_run(plane),
               diagnosis="check every option before the first request")
    entries = tree_entries(plane)
    ctx.expect(not entries,
               expected="%s: nothing created under XDG_STATE_HOME or XDG_DATA_HOME" % label,
               actual="found %s" % ", ".join(entries[:5]),
               diagnosis="read and check the configuration before the first file is written")


def stdout_lines(result_or_life):
    """The lines of a finished life's (or RunResult's) stdout."""
    result = getattr(result_or_life, "result", None) or result_or_life
    return [line for line in (result.stdout or "").split("\n") if line]


def live_stdout(life):
    """The lines a running life has printed so far."""
    return [line for line in life.proc.stdout_text().split("\n") if line]


# ---- G3: planted slot states (state.py, reconcile.py) ----------------------------------------
import hashlib as _hashlib  # noqa: E402
import os as _os  # noqa: E402

from conformance.planes.scan import build_bundle as _build_bundle  # noqa: E402
from conformance.planes.scan import parse_strict as _parse_strict  # noqa: E402
from conformance.planes.scan.trees import private_dirs  # noqa: E402,F401 (re-exported for the check modules)

# A terminal report a planted state may hold (SCAN-TERMINAL-1: a failure code and its detail).
PLANTED_REPORT = {"failure_code": "client_process_failed", "detail": "local worker execution failed"}


def held_state(assignment, phase="assigned", **members):
    """A schema-2 slot state holding an assignment (SCAN-STATE-3), runner null, nothing retained."""
    state = {"schema": 2, "phase": phase, "assignment": assignment, "runner": None, "retained_work": []}
    state.update(members)
    return state


def ready_path(plane, reservation):
    return _os.path.join(plane.bundle_dir, "ready", "%s.jsonl" % reservation.bundle_id)


def plant_ready_bundle(plane, reservation, slot=0, write=True):
    """A completed bundle of reservation in <bundles>/ready/ (mode 0600; write=False: not on
    disk, as after a crash between the two deletions of a cleanup); the state's `bundle`."""
    data = _build_bundle(reservation, slot_id=slot)
    path = ready_path(plane, reservation)
    private_dirs(_os.path.dirname(path))
    if write:
        fd = _os.open(path, _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL, 0o600)
        try:
            _os.write(fd, data)
        finally:
            _os.close(fd)
    trailer = _parse_strict(data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
    return {"bytes": len(data), "payload_sha256": _hashlib.sha256(data).hexdigest(),
            "canonical_scan_event_hash": trailer["events_sha256"]}


def read_bytes(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def lines_of(life, text):
    """How many stdout lines of a life are exactly text."""
    return life.proc.stdout_text().split("\n").count(text)
