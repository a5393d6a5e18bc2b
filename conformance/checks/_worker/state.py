"""STATE: the claim survives a crash at any point (crash points, restarts on the same state directory)."""

from conformance.checks import check
from conformance.checks._worker.plane import WorkerPlane
from conformance.lifecycle import answered, held, when
from conformance.timeouts import SHORT_TIMEOUT_S


@check("state.crash-resume", clauses=["WORKER-STATE-1"], level="MUST",
       title="after SIGKILL a restart replays a lost claim and resumes a granted one, never claims twice",
       fakes="three lives on one state directory: life 1 SIGKILLed while the plane holds its claim (granted, "
             "answer withheld); life 2 SIGKILLed once the state file holds the claim; life 3 SIGKILLed just "
             "after its first poll was answered",
       expected="one claim granted in all; life 2 replays life 1's request id; life 3 sends no claim and polls "
                "with the granted claim")
def _(ctx):
    plane = ctx.use(WorkerPlane(ctx))
    lives = plane.lifecycle()
    # Life 1: the plane grants the claim but the answer never arrives.
    first = lives.start(kill_at=held(plane.server, "POST", "/claim", processed=True))
    first.wait(SHORT_TIMEOUT_S)
    ctx.expect(first.fired, expected="life 1 sends a claim (SIGKILLed while the plane holds it)",
               actual=lambda: "no claim: %s" % first.result.describe(),
               diagnosis="send the claim after its request id is on disk: life 1 never claimed")
    # Life 2: same state directory; killed once the claim is on disk.
    second = lives.restart(kill_at=when(lambda: bool((plane.state_on_disk() or {}).get("claim_id")),
                                        "the state file holds the granted claim"))
    second.wait(SHORT_TIMEOUT_S)
    granted = dict(plane.granted)
    ctx.expect(len(granted) == 1, expected="one claim granted over the crash (life 2 replays life 1's request id)",
               actual=lambda: "%d claims granted, request ids %s" % (len(granted), ", ".join(granted)),
               diagnosis="the request id must be on disk before the claim is sent, and a restart must reuse it")
    ctx.expect(second.fired, expected="life 2 writes the granted claim to its state file",
               actual=lambda: "state file %r; %s" % (plane.state_on_disk(), second.result.describe()),
               diagnosis="write the granted claim to the state file once the claim is answered")
    # Life 3: the claim is on disk; it must be resumed, not made again.
    third = lives.restart(kill_at=answered(plane.server, "GET", "/poll"))
    third.wait(SHORT_TIMEOUT_S)
    claims = [request_id for t, request_id in plane.claims if t >= third.t_start]
    ctx.expect(not claims, expected="life 3 sends no claim (the granted one is in its state file)",
               actual=lambda: "life 3 sent %d claim%s" % (len(claims), "" if len(claims) == 1 else "s"),
               diagnosis="a restart must resume the claim in the state file instead of claiming again")
    polled = [claim_id for t, claim_id in plane.polls if t >= third.t_start]
    ctx.expect(third.fired and polled and set(polled) == set(granted.values()),
               expected="life 3 polls with the granted claim %s" % ", ".join(granted.values()),
               actual=lambda: "life 3 polled with %r; %s" % (polled, third.result.describe()),
               diagnosis="after a restart, resume the claim in the state file and poll with it")
