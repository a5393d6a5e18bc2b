"""Claims: the request id on disk before the claim, the same id until it is answered, and what
each answer means (SCAN-CLAIM-1 to SCAN-CLAIM-6).

The claim is the one request that can reserve work. Its request id is the server's only way to
tell a retry from a new claim, so the id must be on disk before the request leaves and must
survive every failure until an answer is read; a 204 ends it (the next claim takes a fresh id)
and so does a valid 200 or 201.
"""

from conformance.checks import check
from conformance.checks.scan._common import PHASE_TIMEOUT_S, describe_run


@check("claim.persisted-first", clauses=["SCAN-CLAIM-1", "SCAN-CLAIM-3", "SCAN-STATE-4"], level="MUST",
       title="the request id is on disk before the claim, and a restart claims with the same id",
       fakes="the first claim is held unanswered (the server granted it); the worker is SIGKILLed there "
             "and restarted",
       expected="slot-0.json shows claiming with the id the held claim carries; the restarted worker's first "
                "claim carries the same id and gets the same reservation")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    # Act
    first = plane.start(kill_at=plane.held("claim", processed=True))
    first.wait(PHASE_TIMEOUT_S)
    held = plane.server.claims()
    on_disk = first.state_files.get("slot-0.json")
    second = plane.restart()
    plane.wait_resolved(res)
    # Assert
    ctx.expect(first.fired and len(held) >= 1, expected="the first claim held, then the crash",
               actual=lambda: describe_run(plane))
    request_id = held[0].request_id
    ctx.expect(on_disk is not None and request_id is not None and request_id in on_disk.decode("utf-8", "replace")
               and '"claiming"' in on_disk.decode("utf-8", "replace"),
               expected="slot-0.json held {phase: claiming, request_id: %s} when the claim left" % request_id,
               actual=lambda: "slot-0.json at the crash: %r" % (on_disk[:200] if on_disk else None),
               diagnosis="the request id must be persisted before the claim is sent, or a lost answer "
                         "reserves a second assignment")
    after = plane.server.claims(since=second.t_start)
    ctx.expect(bool(after) and after[0].request_id == request_id,
               expected="the restarted worker's first claim carries %s" % request_id,
               actual=lambda: "its first claim carried %s" % (after[0].request_id if after else "nothing"),
               diagnosis="a restart reads the persisted id and claims with it (SCAN-CLAIM-3)")
    ctx.expect(len(plane.server.granted()) == 1 and res.puts,
               expected="one reservation granted, its bundle uploaded",
               actual=lambda: describe_run(plane))
