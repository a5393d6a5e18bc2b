"""Start: `attempt:start` first and once, and the event stream shows the worker at once
(SESSION-START-1, SESSION-START-2).

The first request that carries the capability tells the control plane the worker is warm;
a claim before it would take work for an attempt the server does not know is running. The
`attempt_started` event is what a person watching the session sees, so it goes out before
the first claim rather than with the first probe's events.
"""

from conformance.checks import check
from conformance.checks.session._common import (capability_calls, describe_run, each_variant, expect_summary, faults,
                                                refusal)


@check("start.first-call", clauses=["SESSION-START-1"], level="MUST",
       title="the first capability call is attempt:start, sent once",
       fakes="a healthy plane; no probe; the session is closed after the second claim",
       expected="the first request bearing the capability is attempt:start, and there is exactly one")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    # Act
    plane.start()
    plane.wait_claims(2)
    plane.close_session()
    plane.wait()
    # Assert
    calls = capability_calls(plane)
    verbs = [call.verb for call in calls]
    ctx.expect(verbs[:1] == ["start"], expected="attempt:start before any other capability call",
               actual=lambda: "the capability calls began %s" % ", ".join(verbs[:4]),
               diagnosis="the control plane learns the attempt is running from attempt:start; claim, beat or "
                         "append only after it")
    ctx.expect(verbs.count("start") == 1, expected="one attempt:start", actual="%d" % verbs.count("start"),
               diagnosis="attempt:start is sent once per attempt")
    expect_summary(ctx, plane, terminal_state="closed")


@check("start.event-before-claim", clauses=["SESSION-START-2"], level="MUST",
       title="attempt_started is appended before the first claim",
       fakes="a healthy plane; no probe; the session is closed after the second claim",
       expected="an append carrying attempt_started, answered, before the first probes:claim is sent")
def _(ctx):
    plane = ctx.plane()
    plane.start()
    plane.wait_claims(2)
    plane.close_session()
    plane.wait()
    calls = plane.control.calls()
    first_claim = next((c for c in calls if c.verb == "claim"), None)
    started = [e for e in plane.control.progress_events() if e.event_type == "attempt_started"]
    ctx.expect(bool(started) and first_claim is not None and started[0].call.t < first_claim.t,
               expected="attempt_started appended before the first claim",
               actual=lambda: "attempt_started %s; %s" % ("appended" if started else "never appended",
                                                          describe_run(plane)),
               diagnosis="a watcher sees the worker from attempt_started; it goes out at once, not batched with "
                         "the first probe's events")


# A slow append: long enough that a claim sent without waiting for its answer arrives well
# inside it, short enough (below EVENTS_TIMEOUT_S = 2 s) that the node never gives up on it.
SLOW_APPEND_S = 1.0


@check("start.refused", clauses=["SESSION-START-1"], level="MUST",
       title="a refused or unanswered attempt:start ends the session with its code, sent once",
       fakes="attempt:start answered 409 ATTEMPT_FENCE_STALE, 503 without a code, or reset before an answer",
       expected="one attempt:start; nothing after it but the attempt_finished append; the summary names the "
                "refusal's code (CONTROL_PLANE_HTTP_503, CONTROL_PLANE_UNREACHABLE); exit 1")
def _(ctx):
    variants = [("409 ATTEMPT_FENCE_STALE", (refusal(409, "ATTEMPT_FENCE_STALE"), "ATTEMPT_FENCE_STALE")),
                ("503 without a code", (faults.status(503), "CONTROL_PLANE_HTTP_503")),
                ("reset, no answer", (faults.reset(after_bytes=0), "CONTROL_PLANE_UNREACHABLE"))]

    def act(label, value):
        fault, code = value
        # Arrange
        plane = ctx.plane()
        plane.control.add_fault(fault, plane.control.start_match())
        # Act
        plane.run()
        # Assert
        expect_summary(ctx, plane, failure_code=code, variant=label)
        verbs = [call.verb for call in plane.control.calls() if call.verb not in ("exchange", "lease")]
        ctx.expect(verbs.count("start") == 1 and all(v in ("start", "append") for v in verbs),
                   expected="one attempt:start, then at most the attempt_finished append (variant %s)" % label,
                   actual=lambda: "capability calls: %s" % ", ".join(verbs),
                   diagnosis="attempt:start is sent once; when it fails the attempt never ran, so no claim, beat, "
                             "acquisition or second start follows")
        kinds = [event.event_type for event in plane.control.progress_events()]
        ctx.expect(all(kind == "attempt_finished" for kind in kinds),
                   expected="no event but attempt_finished (variant %s)" % label,
                   actual="events appended: %s" % ", ".join(kinds),
                   diagnosis="after a failed attempt:start nothing follows but the attempt_finished append")
    each_variant(ctx, variants, act)


@check("start.append-answered", clauses=["SESSION-START-2"], level="MUST",
       title="the first claim waits for the attempt_started append's answer",
       fakes="the first events:append (attempt_started) is answered %.1f s late" % SLOW_APPEND_S,
       expected="the first probes:claim arrives after that append was answered")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    plane.control.add_fault(faults.delay(SLOW_APPEND_S), plane.control.events_match(first=1))
    # Act
    plane.start()
    plane.wait_claims(1)
    plane.close_session()
    plane.wait()
    # Assert
    appends = plane.control.calls("append")
    first_claim = plane.control.claims()[0]
    answered = appends[0].exchange.t_answer if appends else None
    ctx.expect(answered is not None and first_claim.t >= answered,
               expected="the first claim after the attempt_started append was answered",
               actual=lambda: "the first claim arrived %s" % (
                   "with no append before it" if answered is None else
                   "%.3f s before the append's answer" % (answered - first_claim.t)),
               diagnosis="the node waits for the attempt_started append (answered or failed) before its first "
                         "claim: a fire-and-forget append lets the first probe's events overtake it")
