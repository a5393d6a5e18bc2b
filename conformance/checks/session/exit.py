"""The summary and the exit status: one line on stdout, the status the table gives, the failed line.

A session worker never completes a run: every end is a terminal state (closed, failed, the
capability's expiry, a consumed dispatch, a stop), which is a normal end with exit 0, or a
failure code, exit 1, with the stderr line `<CODE>: session job did not reach a terminal session
state`; a command line the node does not answer is exit 2 (SESSION-EXIT-3, -4). The naive
mistakes are exiting 1 on a `failed` session state or a consumed dispatch, which makes the
platform retry a task that can only meet the same answer. SESSION-EXIT-1 fixes the summary's
shape and what its ids say; SESSION-EXIT-2 makes it the one line on stdout. The plane's
invariants judge the same rules after every run; these checks provoke each row of the table.
"""

from conformance.checks import check
from conformance.checks.session._common import (
    describe_run, each_variant, expect_report, refusal, stderr_of, run_to_exit)
from conformance.planes.session.verdict import FAILED_LINE

SUMMARY_KEYS = ("status", "role", "session_id", "attempt_id", "probes_answered", "probes_failed", "terminal_state",
                "failure_code", "warm_pool_ready")


def _closed(plane):
    plane.start()
    plane.wait_claims(1)
    plane.close_session()


def _failed_state(plane):
    plane.start()
    plane.wait_claims(1)
    plane.close_session("failed")


def _stopped(plane):
    plane.start()
    plane.stop_when(plane.control.started("claim", 1), what="the first claim")


def _just_start(plane):
    plane.start()


def _usage(plane):
    plane.start(argv=["--session-dispatch-id", plane.control.dispatch_id])


# Each row of SESSION-EXIT-4's table: (label, (plane options, how to act, fault, outcome)); outcome is
# (exit status, terminal state, failure code, whether the lease's session id is known).
OUTCOMES = [
    ("closed", ({}, _closed, None, (0, "closed", None, True))),
    ("failed session state", ({}, _failed_state, None, (0, "failed", None, True))),
    ("capability expired at admission", ({"lifetime_s": -1.0}, _just_start, None,
                                         (0, "capability_expired", None, True))),
    ("consumed dispatch", ({"dispatch_state": "closed"}, _just_start, None, (0, "dispatch_consumed", None, False))),
    ("stop", ({}, _stopped, None, (0, "service_stopped", None, True))),
    ("a refused attempt:start", ({}, _just_start, ("start", refusal(409, "ATTEMPT_STALE")),
                                 (1, None, "ATTEMPT_STALE", True))),
    ("a refused exchange", ({}, _just_start, ("exchange", refusal(403, "EXCHANGE_DENIED")),
                            (1, None, "EXCHANGE_DENIED", False))),
    ("a usage error", ({}, _usage, None, (2, None, None, False))),
]


@check("exit.table", clauses=["SESSION-EXIT-2", "SESSION-EXIT-3", "SESSION-EXIT-4"], level="MUST",
       title="each way a run ends gives its summary, its exit status and, when failed, its last stderr line",
       fakes="one run per row of the table: the session closed; its state failed; the capability expired at "
             "admission; the dispatch consumed; a SIGTERM after the first claim; attempt:start refused "
             "ATTEMPT_STALE; the exchange refused EXCHANGE_DENIED; a command line of two cells",
       expected="exit 0 with one summary line saying stopped and the terminal state for the first five; exit 1, "
                "failed, the code, and the last stderr line `<CODE>: session job did not reach a terminal session "
                "state` for the refusals; exit 2 and nothing on stdout for the command line")
def _(ctx):
    def act(label, value):
        options, how, fault, (status, terminal, failure, _known) = value
        plane = ctx.plane(**options)
        if fault is not None:
            match = getattr(plane.control, fault[0] + "_match")()
            plane.control.add_fault(fault[1], match)
        how(plane)
        result = plane.wait()
        summaries = plane.summaries()
        where = " (variant %s)" % label
        if status == 2:
            ctx.expect(result.exit_code == 2 and result.stdout == "",
                       expected="exit 2 and nothing on stdout" + where,
                       actual="exit %s, stdout %r" % (result.exit_code, result.stdout[:200]),
                       diagnosis="a command line the node does not answer is exit 2, before any summary exists")
            return
        ctx.expect(len(summaries) == 1 and plane.summary_problem() is None,
                   expected="exactly one line on stdout, the canonical summary" + where,
                   actual=lambda: "stdout %r (%s)" % (result.stdout[-300:], plane.summary_problem() or "ok"),
                   diagnosis="every run past the command line and the configuration writes one summary line and "
                             "nothing else on stdout")
        summary = summaries[0]
        wanted = ("stopped" if terminal else "failed", terminal, failure, status)
        got = (summary["status"], summary["terminal_state"], summary["failure_code"], result.exit_code)
        ctx.expect(got == wanted,
                   expected="status %s, terminal_state %s, failure_code %s, exit %d%s" % (wanted + (where,)),
                   actual=lambda: "status %s, terminal_state %s, failure_code %s, exit %s (%s)" % (
                       got + (describe_run(plane),)),
                   diagnosis="a terminal state (a failed session state and a consumed dispatch included) is a normal "
                             "end, exit 0; only a failure code is exit 1")
        lines = stderr_of(result)
        if failure:
            line = FAILED_LINE % failure
            ctx.expect(lines and lines[-1] == line, expected="the last stderr line %r%s" % (line, where),
                       actual="stderr ends %r" % lines[-2:],
                       diagnosis="a failed run ends its stderr with its code and the fixed sentence")
        else:
            wrong = [text for text in lines if text.endswith(FAILED_LINE % "")]
            ctx.expect(not wrong, expected="no failed line on stderr for a terminal state%s" % where,
                       actual="stderr %r" % wrong[:2], diagnosis="a session that reached a terminal state did not fail")

    each_variant(ctx, OUTCOMES, act)


@check("exit.summary", clauses=["SESSION-EXIT-1"], level="MUST",
       title="the summary names the session, the attempt, the probes answered and failed, and one outcome",
       fakes="a session with one probe answered and one refused (its source outside the allowlist), then closed; "
             "then a run whose exchange is refused (no lease), then one whose attempt:start is refused",
       expected="role session; session_id the lease's (null without a lease); attempt_id the lease's or null; "
                "probes_answered 1 and probes_failed 1; exactly one of terminal_state and failure_code; "
                "warm_pool_ready an integer")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    source = plane.add_source(columns=["city", "temp"], rows=[["Oslo", 3], ["Lima", 19]])
    answered = plane.probe("sample_rows", source, limit=5)
    refused = plane.probe("source_inspect", request={"source_id": "00000000-0000-4000-8000-00000000beef"})
    # Act
    run_to_exit(plane, [answered, refused])
    # Assert
    expect_report(ctx, plane, answered, "succeeded", what="the probe of an allowed source")
    expect_report(ctx, plane, refused, "failed", "PROBE_SOURCE_OUT_OF_SCOPE", what="the probe outside the allowlist")
    binding = plane.control.binding
    summary = plane.summary() or {}
    wanted = {"status": "stopped", "role": "session", "session_id": binding["session_id"], "probes_answered": 1,
              "probes_failed": 1, "terminal_state": "closed", "failure_code": None}
    got = dict((key, summary.get(key)) for key in wanted)
    ctx.expect(sorted(summary) == sorted(SUMMARY_KEYS) and got == wanted
               and summary.get("attempt_id") in (binding["attempt_id"], None)
               and isinstance(summary.get("warm_pool_ready"), int),
               expected="a summary %s, attempt_id the lease's or null, warm_pool_ready an integer" % wanted,
               actual="summary %s" % summary,
               diagnosis="the summary carries the lease's session id (D8) and counts the probes delivered")

    def act(label, value):
        verb, status, code, known = value
        plane = ctx.plane()
        plane.control.add_fault(refusal(status, code), getattr(plane.control, verb + "_match")())
        plane.run()
        summary = plane.summary() or {}
        session_id = plane.control.binding["session_id"] if known else None
        ctx.expect(summary.get("session_id") == session_id and summary.get("failure_code") == code
                   and summary.get("terminal_state") is None and summary.get("status") == "failed"
                   and summary.get("probes_answered") == 0,
                   expected="status failed, session_id %s, failure_code %s, no terminal state, no probe (variant %s)"
                            % (session_id, code, label),
                   actual="summary %s" % summary,
                   diagnosis="session_id is the lease's once known and null before a lease; one outcome only")

    each_variant(ctx, [("the exchange refused", ("exchange", 403, "EXCHANGE_DENIED", False)),
                       ("attempt:start refused", ("start", 409, "ATTEMPT_STALE", True))], act)
