"""Shared assertions of the session checks.

Each helper states one expectation in the contract's words, so a check reads as
Arrange / Act / Assert and a failure names what the node did instead. The plane
(conformance/planes/session) runs the node and records what every fake saw;
the invariants it applies after every run (secrets, TMPDIR, leftovers, the
output rules) need no repeating here.
"""

import os
import re

from conformance import faults
from conformance.checks import stops
from conformance.checks.bytecode import bytecode_problem, file_digest  # noqa: F401 (file_digest re-exported)
from conformance.checks.variants import each_variant, retire_plane
from conformance.planes.session import refusal
from conformance.planes.session.plane import PHASE_TIMEOUT_S, SESSION_RUN_TIMEOUT_S
from conformance.runner import proc_alive, proc_field  # noqa: F401 (re-exported for the area modules)

__all__ = ["faults", "refusal", "each_variant", "retire_plane", "PHASE_TIMEOUT_S", "SESSION_RUN_TIMEOUT_S",
           "STOP_BUDGET_S", "DRAIN_BUDGET_S", "SCHEDULE_SLACK_S", "describe_run", "expect_summary",
           "expect_no_request", "capability_calls", "expect_report", "run_to_exit", "stop_unnoticed",
           "summary_diagnosis", "NEW_WORK", "STOPPING", "stop_unnoticed_so_far"]

# The verbs that start new work (SESSION-STOP-2): none may start after a stop.
NEW_WORK = ("claim", "acquire", "read")
# The failure code of a probe answered because the node is stopping (SESSION-STOP-3).
STOPPING = "SESSION_WORKER_STOPPING"

# SESSION-STOP-5: every process gone within 1 s of a stop when the control
# plane answers at once, and within STOP_GRACE_S + 1 s = 6 s whatever it does.
STOP_BUDGET_S = 1.0
DRAIN_BUDGET_S = 6.0
# What a check allows on top of a schedule the node keeps (an interval, a
# deadline, a ceiling): an interpreter's scheduling on a loaded 2-core machine.
SCHEDULE_SLACK_S = 0.75

# The fakes that must see nothing when a run is refused before its first request.
FAKES = ("metadata", "control", "store", "tripwire")


def describe_run(plane, result=None):
    """One line: exit status, the summary (or the stderr's start), and the last requests."""
    result = result or plane.result
    if result is None:
        return "the node did not run"
    summary = plane.summary(result)
    shown = ("summary %s/%s" % (summary["terminal_state"] or "-", summary["failure_code"] or "-")
             if summary else "no summary (stderr %r)" % (result.stderr or "")[-200:])
    return "exit %s, %s; %s" % (result.exit_code, shown, plane.describe_exchanges())


def stop_unnoticed(plane, since=None):
    """The diagnosis "no handler ran", when a run the harness stopped shows no sign
    of it: no trace of a stop (a service_stopped summary or attempt_finished event,
    a SESSION_WORKER_STOPPING report, a stderr line naming the signal) and the run
    went on as if nothing happened (it ended another way, or kept claiming after
    the signal). None when the run shows the stop was seen, or cannot tell: a node
    that went quiet after the signal and was killed may have seen it and hung."""
    result = plane.result
    if result is None or not result.signals:
        return None
    t_signal, signum = result.signals[0]
    summary = plane.summary()
    pattern = re.compile(r"\b(%d|%s)\b" % (signum, stops.signal_name(signum)))
    trace = ((summary is not None and summary["terminal_state"] == "service_stopped")
             or any(e.event_type == "attempt_finished" and (e.facts or {}).get("outcome") == "service_stopped"
                    for e in plane.control.progress_events())
             or any((call.doc or {}).get("failure_code") == STOPPING for call in plane.control.reports())
             or any(t >= t_signal and pattern.search(line) for t, line in result.stderr_lines))
    went_on = (not result.timed_out and not result.killed) or any(
        call.verb in NEW_WORK and call.t > t_signal + SCHEDULE_SLACK_S for call in plane.control.calls())
    return stops.unnoticed(result, trace or not went_on,
                           "no service_stopped summary or event, no %s report, and the run went on" % STOPPING)


def stop_unnoticed_so_far(plane):
    """While the node still runs: "no handler ran" when it was sent a stop and has
    started new work since (a claim, an acquisition or a read after the signal and
    the machine's slack, SESSION-STOP-2) with no trace of the stop; None otherwise."""
    proc = plane.proc
    if proc is None or not proc.signals:
        return None
    t_signal, signum = proc.signals[0]
    if any((call.doc or {}).get("failure_code") == STOPPING for call in plane.control.reports()):
        return None
    went_on = any(call.verb in NEW_WORK and call.t > t_signal + SCHEDULE_SLACK_S for call in plane.control.calls())
    if not went_on:
        return None
    return ("no handler ran (the node started new claims, acquisitions or reads after the %s, and no %s report): "
            "install a %s handler at the start of main()%s" % (
                stops.signal_name(signum), STOPPING, stops.signal_name(signum),
                " (as PID 1 the kernel drops the signal otherwise)" if proc.is_pid1 else ""))


def summary_diagnosis(plane, terminal_state, failure_code, wanted_exit):
    """What the node most likely does wrong when its summary or exit status is not the expected one."""
    unnoticed = stop_unnoticed(plane)
    if unnoticed:
        return unnoticed
    result = plane.result
    if result.timed_out:
        return "the node was still running when the harness killed it: some wait has no bound; bound it"
    summary = plane.summary()
    if summary is None:
        problem = plane.summary_problem()
        return ("end every run with exactly one summary line on stdout, the canonical summary object%s"
                % (": here %s" % problem if problem else ""))
    wanted = "terminal_state %s" % terminal_state if terminal_state else "failure_code %s" % failure_code
    if (summary["terminal_state"], summary["failure_code"]) != (terminal_state, failure_code):
        got = ("terminal_state %s" % summary["terminal_state"] if summary["terminal_state"]
               else "failure_code %s" % summary["failure_code"])
        return "the node ended the session with %s where the contract gives %s here" % (got, wanted)
    return ("the exit status follows the summary: 0 when it says stopped (a terminal state), 1 when it says "
            "failed; this run should exit %d" % wanted_exit)


def expect_summary(ctx, plane, terminal_state=None, failure_code=None, exit_code=None, variant=None):
    """The run ended with a summary naming exactly this terminal state or failure code, and
    exit 0 for a terminal state, 1 for a failure code (SESSION-EXIT-1, -4)."""
    where = " (variant %s)" % variant if variant else ""
    wanted_exit = exit_code if exit_code is not None else (0 if terminal_state else 1)
    summary = plane.summary()
    got = (summary["terminal_state"], summary["failure_code"]) if summary else None
    shown = "terminal_state %s" % terminal_state if terminal_state else "failure_code %s" % failure_code
    ctx.expect(got == (terminal_state, failure_code) and plane.result.exit_code == wanted_exit,
               expected="a summary with %s and exit %d%s" % (shown, wanted_exit, where),
               actual=lambda: describe_run(plane),
               diagnosis=lambda: summary_diagnosis(plane, terminal_state, failure_code, wanted_exit))
    return summary


def expect_no_request(ctx, plane, variant=None):
    """No fake saw a request (a refusal before any request: argv, configuration)."""
    where = " (variant %s)" % variant if variant else ""
    seen = ["%s: %d" % (name, len(getattr(plane, name).transcript)) for name in FAKES
            if getattr(plane, name).transcript]
    ctx.expect(not seen, expected="no request at any fake%s" % where, actual="requests at " + ", ".join(seen),
               diagnosis="this refusal comes before the node makes any request")


def capability_calls(plane):
    """Every control-plane call that presented the capability, in arrival order."""
    return [call for call in plane.control.calls() if call.bearer == "capability"]


def expect_report(ctx, plane, probe_id, outcome, failure_code=None, what=""):
    """The first report of probe_id has this outcome (and failure code); returns its call."""
    call = plane.wait_report(probe_id)
    doc = call.doc or {}
    got = (doc.get("outcome"), doc.get("failure_code"))
    wanted = (outcome, failure_code)
    ctx.expect(got == wanted, expected="the report of %s: outcome %s%s" % (
                   what or "the probe", outcome, ", failure_code %s" % failure_code if failure_code else ""),
               actual=lambda: "outcome %s, failure_code %s (%s)" % (got[0], got[1], describe_run(plane)
                                                                    if plane.result else plane.describe_exchanges()),
               diagnosis="the node answered the probe %s%s where the contract gives %s%s here" % (
                   got[0], " (%s)" % got[1] if got[1] else "", outcome, " (%s)" % failure_code if failure_code else ""))
    return call


def run_to_exit(plane, probe_ids=(), close=True, **start):
    """Start the node, wait for the report of each of probe_ids, close the session (unless
    close is False) and wait for the node's exit; returns the RunResult."""
    plane.start(**start)
    for probe_id in probe_ids:
        plane.wait_report(probe_id)
    if close:
        plane.close_session()
    return plane.wait()


# ---------------------------------------------------------------- group G1 (argv, config, dispatch, lease,
# exit, service): a refusal's stderr line, a lease the control plane changes, a refused lease.

def stderr_of(result):
    """The run's stderr lines, without their times."""
    return [line for _t, line in result.stderr_lines]


def expect_code_line(ctx, result, code, exit_code, variant=None, alone=False, hidden=()):
    """Exit exit_code with a stderr line `CODE: ...` (alone: the only stderr line) that repeats none
    of hidden (tokens of the command line, values of the environment); returns the line's text after
    the code."""
    where = " (variant %s)" % variant if variant else ""
    lines = stderr_of(result)
    found = [line for line in lines if line.startswith(code + ": ")]
    shape_ok = bool(found) and (len(lines) == 1 if alone else True)
    ctx.expect(result.exit_code == exit_code and shape_ok,
               expected="exit %d and %s stderr line `%s: ...`%s" % (exit_code, "one" if alone else "a", code, where),
               actual=lambda: "exit %s; stderr %r" % (result.exit_code, lines[-3:]),
               diagnosis="this input is refused with its own code and exit status, before the session starts")
    echoed = [token for token in hidden if token and any(token in line for line in lines)]
    ctx.expect(not echoed, expected="stderr repeating nothing of the input%s" % where,
               actual=lambda: "stderr repeats %s" % ", ".join(repr(t) for t in echoed),
               diagnosis="a refusal's text is fixed: argv or an environment value may carry a secret by mistake")
    return found[0][len(code) + 2:]


def lease_patch(**changes):
    """A lease_patch option that sets (or, with OMIT, drops) lease keys; context=dict merges into the
    context (OMIT values drop context keys); a callable value is called with the lease as built."""
    from conformance.planes.session import OMIT

    def patch(lease):
        for key, value in changes.items():
            value = value(lease) if callable(value) else value
            if key == "context" and isinstance(value, dict):
                for name, item in value.items():
                    if item is OMIT:
                        lease["context"].pop(name, None)
                    else:
                        lease["context"][name] = item
            elif value is OMIT:
                lease.pop(key, None)
            else:
                lease[key] = value
        return lease
    return patch


def expect_lease_refused(ctx, plane, code="SESSION_LEASE_INVALID", variant=None):
    """The run ended with failure code `code`, exit 1, and no capability call: the lease was refused
    before its capability was used (section *The lease*)."""
    expect_summary(ctx, plane, failure_code=code, variant=variant)
    used = [call.verb for call in plane.control.calls() if call.verb not in ("exchange", "lease")]
    ctx.expect(not used, expected="no request after the exchange (variant %s)" % variant,
               actual="then %s" % ", ".join(used[:5]),
               diagnosis="a lease that breaks a rule is refused before the first capability call")


# ---------------------------------------------------------------- G3: probes, acquisitions, progress
# Helpers of probe.py, acquire.py, progress.py and work.py: what a probe's run left at the
# fakes (its reports, creates, reads, downloads), the sandbox policy's digest as the contract
# defines it, and the normalized request whose relations SESSION-PROBE-7 states.

import math as _math

from conformance.planes.session import deploy
from conformance.planes.session.control import digest as _digest
from conformance.planes.session.control import schema_problems as _schema_problems

# SESSION-ISOLATION-5: the sandbox policy's fixed entries (the rest depends on the configuration).
SANDBOX_POLICY_FIXED = {"schema_version": "session-probe-sandbox.v1", "network": "denied",
                        "process_creation": "denied", "no_new_privs": True, "address_space_bytes": 536870912,
                        "core_bytes": 0, "open_files": 16}
# Section *The probe vocabulary*: the request defaults the normalized request fills in (within the
# deployment's bounds: a lower ceiling lowers the default).
def request_defaults():
    return {"scan_rows": min(10000, deploy.MAX_SCAN_ROWS), "offset": 0, "limit": min(20, deploy.MAX_SAMPLE_LIMIT)}


REQUEST_KEYS = {"source_inspect": ("source_id", "scan_rows"),
                "sample_rows": ("source_id", "offset", "limit", "columns"),
                "profile_columns": ("source_id", "scan_rows", "columns"),
                "evaluate_expression": ("source_id", "scan_rows", "expression")}


def policy_digest(probe_timeout_s, attestation=None):
    """The digest every result carries as sandbox_policy_digest (SESSION-ISOLATION-5), for a node
    run with MR_SESSION_WORKER_PROBE_TIMEOUT_SECONDS = probe_timeout_s."""
    policy = dict(SANDBOX_POLICY_FIXED, cpu_seconds=int(_math.ceil(probe_timeout_s)) + 1,
                  timeout_ms=int(_math.ceil(probe_timeout_s * 1000)),
                  external_network_policy_attestation=attestation)
    return _digest(policy)


def normalized_request(kind, request):
    """The request with its defaults filled in (`columns` stays absent when absent)."""
    found, defaults = dict(request), request_defaults()
    for key in REQUEST_KEYS[kind]:
        if key in defaults and key not in found:
            found[key] = defaults[key]
    return found


def first_report(plane, probe_id):
    """The document of the first report of probe_id the control plane recorded, or None."""
    for call in plane.control.reports(probe_id):
        if call.doc is not None:
            return call.doc
    return None


def creates(plane, source_id=None):
    """Every acquisition create (ControlCall), for source_id when given (by its body)."""
    return [c for c in plane.control.calls("acquire")
            if source_id is None or (c.doc or {}).get("source_id") == source_id]


def store_requests(plane, source=None):
    """Every request the object store received, for the bundle of source when given."""
    key = getattr(source, "key", None)
    return [ex for ex in plane.store.transcript if source is None or (key is not None and ex.key == key)]


def relation_problems(kind, request, result, columns, rows):
    """What SESSION-PROBE-6 (shape) and SESSION-PROBE-7 (relations) say is wrong with a result,
    judged against the content the plane served (columns, rows) and the normalized request; []
    when nothing is. Never the values a node computes: only what every node promises."""
    problems = ["schema: " + p for p in _schema_problems("probe-result", result)]
    if problems or not isinstance(result, dict):
        return problems or ["not an object"]
    request = normalized_request(kind, request)
    count, scanned = len(rows), result.get("rows_scanned")
    wanted = request.get("columns") or list(columns[:deploy.MAX_PROFILE_COLUMNS])
    if kind != "sample_rows" and result.get("truncated") is not False:
        problems.append("truncated is not false for %s" % kind)
    bound = min(count, request["offset"] + request["limit"] if kind == "sample_rows" else request["scan_rows"])
    if not isinstance(scanned, int) or scanned > bound:
        problems.append("rows_scanned %r above %d (the row count, scan_rows or offset + limit)" % (scanned, bound))
    if kind == "sample_rows":
        got_rows = result.get("rows") or []
        window = max(0, min(count, request["offset"] + request["limit"]) - request["offset"])
        if result.get("columns") != wanted:
            problems.append("columns %r are not %r" % (result.get("columns"), wanted))
        if len(got_rows) > request["limit"] or len(got_rows) > window:
            problems.append("%d rows for a window of %d" % (len(got_rows), window))
        if any(len(row) != len(wanted) for row in got_rows):
            problems.append("a row without one cell per column")
        if result.get("truncated") is not (len(got_rows) < window):
            problems.append("truncated %r with %d of the window's %d rows" % (result.get("truncated"),
                                                                              len(got_rows), window))
    elif kind == "profile_columns":
        entries = result.get("columns") or []
        if [e.get("name") for e in entries] != wanted:
            problems.append("columns %r are not %r" % ([e.get("name") for e in entries], wanted))
        for entry in entries:
            if entry.get("non_null", 0) + entry.get("nulls", 0) != scanned:
                problems.append("column %r: non_null + nulls is not rows_scanned" % entry.get("name"))
            if entry.get("distinct", 0) > entry.get("non_null", 0):
                problems.append("column %r: distinct above non_null" % entry.get("name"))
    elif kind == "source_inspect":
        names = [e.get("name") for e in result.get("columns") or []]
        if names != list(columns[:deploy.MAX_PROFILE_COLUMNS]):
            problems.append("columns %r are not the content's first %d" % (names, deploy.MAX_PROFILE_COLUMNS))
    elif kind == "evaluate_expression":
        expression = request["expression"]
        matched = result.get("rows_matched")
        if isinstance(scanned, int) and isinstance(matched, int) and matched > scanned:
            problems.append("rows_matched above rows_scanned")
        if expression.get("aggregate") == "count" and result.get("value") != matched:
            problems.append("a count whose value %r is not rows_matched %r" % (result.get("value"), matched))
        if result.get("aggregate") != expression.get("aggregate"):
            problems.append("aggregate is not the request's")
        if ("column" in result) != ("column" in expression) or result.get("column") != expression.get("column"):
            problems.append("column is not echoed exactly when the request names one")
    return problems


# ---------------------------------------------------------------- group G2 (CALLBACK, START, HEARTBEAT,
# CLAIM, BACKOFF, REPORT): faults at chosen requests of one route, and the moments a retry began.

def fault_at(fake, match_of, plan):
    """Install each (n, fault) of plan on the n-th request (1-based) that match_of() selects, n
    increasing, so one series of requests meets a scripted mix of answers. A rule passes over
    the requests earlier rules took (select_rule stops at the first that applies), so the j-th
    rule (0-based) skips n - 1 - j; no other rule may sit on that route."""
    rules = []
    for index, (n, fault) in enumerate(sorted(plan, key=lambda item: item[0])):
        rules.append(fake.add_fault(fault, match_of(skip=n - 1 - index, first=1)))
    return rules


def began(fake, call):
    """When the node began this request: the accept time of its connection when it is that
    connection's first request, else its arrival. A retry's delay is measured from the moment
    the failed answer started (t_answer, before its first byte) to here, so the measure can
    only add the node's own latency to the delay, never take from it."""
    ex = call.exchange
    first = min((e.seq for e in fake.transcript if e.conn_id == ex.conn_id), default=ex.seq)
    if first == ex.seq:
        for record in fake.connections:
            if record.conn_id == ex.conn_id:
                return record.t_accept
    return ex.t_start


def answered_at(call):
    """When the answer of this request began (or the exchange ended, for one never answered)."""
    ex = call.exchange
    return ex.t_answer if ex.t_answer is not None else (ex.t_end if ex.t_end is not None else ex.t_start)


def backoff_ceiling(base_s, n):
    """D25: v of the n-th consecutive retry, min(BACKOFF_CAP_FACTOR x base, base x 2^(n-1))."""
    return min(BACKOFF_CAP_FACTOR * base_s, base_s * 2 ** (n - 1))


# D25: a retry delay is at most this many times its base.
BACKOFF_CAP_FACTOR = 16


# ---------------------------------------------------------------------------------------------
# Group G4 (DEADLINE, STOP, ISOLATION, SECRET, NODE-4): the node's processes, read from /proc.

def monitor_children(plane):
    """The live children of the node's first process (the monitor), from /proc: in Job mode
    exactly one, the capability process (SESSION-ISOLATION-1)."""
    from conformance.runner import descendants
    host = plane.proc.host_pid
    return [pid for pid in descendants(host) if proc_field(pid, "PPid") == str(host)]


def capability_pid(ctx, plane):
    """The capability process's pid (the monitor's one child); fails the check when there is none."""
    children = monitor_children(plane)
    ctx.expect(len(children) == 1, expected="the monitor has exactly one child, the capability process",
               actual=lambda: "%d children (%s)" % (len(children), describe_run(plane) if plane.result else
                                                    plane.describe_exchanges()),
               diagnosis="in Job mode the monitor forks exactly one child that obtains and uses the lease "
                         "(SESSION-ISOLATION-1)")
    return children[0]


def node_program(ctx, plane):
    """(interpreter, node file) of the running node, learnt from its own process (/proc/PID/exe and
    its command line), never from this harness's sys.executable: a node judged with --python, or
    given as `-- python3.9 worker.py`, starts its children with its own interpreter and file.
    The node file is None when the node is no Python file the harness can name."""
    pid = plane.proc.host_pid
    interpreter = os.path.realpath("/proc/%d/exe" % pid)
    script = ctx.node.path
    if script is None:
        argv = plane.proc.cmdline_snapshot or []
        cwd = os.path.realpath("/proc/%d/cwd" % pid)
        script = next((os.path.realpath(os.path.join(cwd, cell)) for cell in argv[1:]
                       if cell.endswith(".py") and os.path.isfile(os.path.join(cwd, cell))), None)
    return interpreter, script


# D54: how the bytecode is named, in the session's scratch directory (a directory of TMPDIR).
CODE_NAME_RE = re.compile(r"probe-code-([a-f0-9]{64})\.[A-Za-z0-9_-]{1,64}\.pyc")


def code_problem(tmpdir, path, digest):
    """Why `path` is not the D54 bytecode of a node of `digest` in a scratch directory of tmpdir;
    None when it is."""
    if os.path.realpath(os.path.dirname(os.path.dirname(path))) != os.path.realpath(tmpdir):
        return "%s is not in a directory of TMPDIR (%s)" % (path, tmpdir)
    return bytecode_problem(path, CODE_NAME_RE, digest, "probe-code-<sha256>.<tag>.pyc")


def runs_node(argv, script, tmpdir):
    """Whether a probe child's argv[3] is the node file itself or its D54 bytecode (SESSION-ISOLATION-5)."""
    program = argv[3] if len(argv) > 3 else None
    if program is None or script is None:
        return program is not None
    if os.path.realpath(program) == os.path.realpath(script):
        return True
    try:
        digest = file_digest(script)
    except OSError:
        return False
    return code_problem(tmpdir, program, digest) is None


def names_probe_code(argv, tmpdir, digest=None):
    """Whether argv runs D54 bytecode of the node (of `digest`, when known) from a directory of
    tmpdir, judged by name alone: after the run the scratch directory, and the file, are gone."""
    program = argv[3] if len(argv) > 3 else ""
    match = CODE_NAME_RE.fullmatch(os.path.basename(program))
    return (match is not None and (digest is None or match.group(1) == digest)
            and os.path.realpath(os.path.dirname(os.path.dirname(program))) == os.path.realpath(tmpdir))
