"""Claims: the request id on disk before the claim, the same id until it is answered, and what
each answer means (SCAN-CLAIM-1 to SCAN-CLAIM-6).

The claim is the one request that can reserve work. Its request id is the server's only way to
tell a retry from a new claim, so the id must be on disk before the request leaves and must
survive every failure until an answer is read; a 204 ends it (the next claim takes a fresh id)
and so does a valid 200 or 201.
"""

import hashlib
import json
import time

from conformance.checks import check
from conformance.checks.scan._common import (CLOCK_EPSILON_S, PHASE_TIMEOUT_S, SCHEDULE_SLACK_S, calls,
                                             describe_run, each_variant, faults, runner_roots, wait_between)
from conformance.planes.scan import DELETE
from conformance.planes.scan import deploy as _deploy
from conformance.planes.scan.calls import build_values


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
               actual=lambda: describe_run(plane),
               diagnosis="persist the claim's request id, then send the claim: the worker never held a claim this "
                         "check could crash it on")
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
               actual=lambda: describe_run(plane),
               diagnosis="resume the held claim after the restart with the same request id, so the server grants one "
                         "reservation, and upload its bundle")


# ---------------------------------------------------------------------------------------------
# Group G2: the claim's form, its request id across failures, and each answer (SCAN-CLAIM-2..6).

# The error delay these checks pass: small, so a retried claim comes quickly (the contract's floor).
QUICK_ERROR_DELAY_S = 0.1
# A wait the check must tell apart from "soon": a node that waits it where it should not is
# caught by the machine's slack with room to spare.
LONG_WAIT_S = 3.0
# The 200 variants: a resolution whose fields are each broken in one way (SCAN-CLAIM-5).
HEX = "0123456789abcdef"
# SCAN-CLAIM-6: an assignment whose canonical state exceeds MAX_PENDING_BYTES while its answer stays
# under MAX_API_RESPONSE_BYTES (the same bound): each "é" is 2 bytes of UTF-8 in the answer and the 6
# bytes of "\\u00e9" in the state (canonical JSON is ASCII); this share of the bound in "é" does both.
WIDE_SHARE = 0.38


def _claim_id(call):
    return call.request_id or (call.doc or {}).get("request_id")


def _expect_same_id_retried(ctx, plane, claims, what):
    """Claims 1 and 2 carry one id, slot-0.json still claims with it, and no status read followed."""
    first, second = claims[0], claims[1]
    state = plane.slot_state(0) or {}
    ctx.expect(_claim_id(first) is not None and _claim_id(second) == _claim_id(first),
               expected="after %s, the next claim carries the same request id %s" % (what, _claim_id(first)),
               actual=lambda: "it carried %s (%s)" % (_claim_id(second), describe_run(plane)),
               diagnosis="the answer was not a valid one: the claim is not over, and the server deduplicates on "
                         "its id (SCAN-CLAIM-3)")
    ctx.expect(state.get("phase") == "claiming" and state.get("request_id") == _claim_id(first),
               expected="slot-0.json still {phase: claiming, request_id: %s}" % _claim_id(first),
               actual=lambda: "slot-0.json: %r" % (plane.slot_raw(0) or b"")[:200],
               diagnosis="an answer the worker cannot use keeps the claiming state as it was")
    statuses = calls(plane, "status")
    ctx.expect(not statuses and not runner_roots(plane),
               expected="no status read and no runner after %s" % what,
               actual=lambda: "%d status read(s), roots %s (%s)" % (len(statuses), runner_roots(plane),
                                                                   describe_run(plane)),
               diagnosis="nothing was kept from the answer, so there is nothing to ask about or run")


@check("claim.request", clauses=["SCAN-CLAIM-2"], level="MUST",
       title="the claim is a POST of exactly {build, request_id}, build describing this node's bytes",
       fakes="an empty queue: the claim is answered 204",
       expected="POST /api/v1/worker/claim, canonical JSON with exactly the JSON headers; build is the CLAIM_BUILD in "
                "force (by default exactly capabilities, code_sha256, node, protocol 2, version); code_sha256 is the "
                "SHA-256 of the node file")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    node_sha256 = None
    if ctx.node.path:  # a node given as a command has no file whose digest the check can know
        with open(ctx.node.path, "rb") as handle:
            node_sha256 = hashlib.sha256(handle.read()).hexdigest()
    # Act
    plane.start()
    claim = plane.wait_claims(1)[0]
    # Assert
    ctx.expect(claim.method == "POST" and claim.problems == [],
               expected="a POST whose body and headers are those of SCAN-CLAIM-2 and SCAN-HTTP-2",
               actual=lambda: "%s %s: %s (body %r)" % (claim.method, claim.path, "; ".join(claim.problems),
                                                       claim.body[:300]),
               diagnosis="the claim body is exactly {build, request_id}, canonical, with the JSON headers only")
    build = (claim.doc or {}).get("build")
    digests = build_values(build, "$code_sha256")  # D30: where the CLAIM_BUILD in force puts it
    ctx.expect(node_sha256 is None or digests == [node_sha256],
               expected="the build's code_sha256 = %s, the digest of the node file as it runs" % node_sha256,
               actual="it is %r" % (digests,),
               diagnosis="the server tells builds apart by the digest of the node's bytes")
    texts = build_values(build, "$node") + build_values(build, "$version")
    ctx.expect(all(isinstance(t, str) and t for t in texts),
               expected="the build's node and version are names (non-empty strings)",
               actual="%r" % (texts,),
               diagnosis="N and V name the node (SCAN-CLAIM-2)")


@check("claim.same-id-after-failures", clauses=["SCAN-CLAIM-3"], level="MUST",
       title="a claim that failed in transport, with an error answer or a protocol error keeps its request id",
       fakes="the first claim processed by the server (it granted the reservation) then reset; the second "
             "answered 500; the third answered 200 with a body that is not JSON; the fourth as the server does",
       expected="all four claims carry one request id; one reservation granted, to it; its bundle accepted")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    # The first rule that applies answers, and each applies once: claims 1, 2, 3 in turn.
    plane.server.add_fault(faults.reset(after_bytes=0), plane.server.claim_match(first=1, phase="response"))
    plane.server.add_fault(plane.server.error_answer(500, "internal"), plane.server.claim_match(first=1))
    plane.server.add_fault(faults.garbage(b"not json at all"), plane.server.claim_match(first=1))
    # Act
    plane.start(error_delay_s=QUICK_ERROR_DELAY_S)
    plane.wait_resolved(res)
    # Assert
    claims = plane.server.claims()
    ids = [_claim_id(c) for c in claims[:4]]
    ctx.expect(len(ids) == 4 and len(set(ids)) == 1 and ids[0] is not None,
               expected="the four claims carry one request id",
               actual=lambda: "request ids %s (%s)" % (ids, describe_run(plane)),
               diagnosis="until an answer is read, every claim repeats the persisted id: the server may already "
                         "have granted it, and a new id would reserve a second assignment")
    ctx.expect(plane.server.granted() == {ids[0]: res.reservation_id} and res.resolution == "bundle_accepted",
               expected="one grant (reservation %d, to %s), its bundle accepted" % (res.reservation_id, ids[0]),
               actual=lambda: "grants %r, resolution %s" % (plane.server.granted(), res.resolution),
               diagnosis="the replayed id gets the same assignment, which the worker then scans")


NO_WORK_VARIANTS = [
    ("Retry-After missing", {"retry_after": None}),
    ("Retry-After 0", {"retry_after": "0"}),
    ("Retry-After 301", {"retry_after": "301"}),
    ("Retry-After -1", {"retry_after": "-1"}),
    ("Retry-After as an HTTP-date", {"retry_after": "Wed, 21 Oct 2026 07:28:00 GMT"}),
    ("unknown X-Truf-No-Work-Reason", {"retry_after": 1, "no_work_reason": "lunch_break"}),
]


@check("claim.no-work-invalid", clauses=["SCAN-CLAIM-4", "SCAN-CLAIM-3"], level="MUST",
       title="a 204 without a usable Retry-After or with an unknown reason is a protocol error: same id, error delay",
       fakes="every claim answered 204, one variant each: %s" % ", ".join(label for label, _ in NO_WORK_VARIANTS),
       expected="the next claim carries the same request id, after the error delay (within [E/2, E] plus the "
                "machine's slack); slot-0.json still claiming with it")
def _(ctx):
    def act(label, options):
        # Arrange
        plane = ctx.plane(**options)
        # Act
        plane.start(error_delay_s=QUICK_ERROR_DELAY_S * 2)
        claims = plane.wait_claims(2)
        # Assert
        _expect_same_id_retried(ctx, plane, claims, "a 204 with %s" % label)
        gap = wait_between(plane, claims[0], claims[1])
        low, high = QUICK_ERROR_DELAY_S - CLOCK_EPSILON_S, QUICK_ERROR_DELAY_S * 2 + SCHEDULE_SLACK_S
        ctx.expect(low <= gap <= high,
                   expected="the next claim %.2f..%.2f s after the answer (the error delay)" % (low, high),
                   actual="it came %.3f s after" % gap,
                   diagnosis="an invalid 204 is a failed step: it waits the error delay, not a Retry-After")
        plane.life.kill()
    each_variant(ctx, NO_WORK_VARIANTS, act)


def _resolution_variants():
    return [
        ("receipt_id of 63 hex digits", {"receipt_id": "a" * 63}),
        ("bundle_id of 31 hex digits", {"bundle_id": "b" * 31}),
        ("resolution \"done\"", {"resolution": "done"}),
        ("reservation_id 0", {"reservation_id": 0}),
    ]


def _planted_resolved_claim(plane):
    """A reservation granted to a request id and resolved by the server, and slot-0.json claiming
    with that id: the worker's first claim is a replay the server answers 200 (SCAN-CLAIM-5)."""
    res = plane.add_assignment(queued=False)
    request_id, _doc = plane.grant(res)
    plane.resolve(res, "expired")
    plane.write_slot(0, {"schema": 2, "phase": "claiming", "request_id": request_id})
    return res, request_id


@check("claim.resolved", clauses=["SCAN-CLAIM-5", "SCAN-BACKOFF-4"], level="MUST",
       title="a valid 200 resolution ends the claim at once; a malformed one keeps it",
       fakes="slot-0.json claiming with a request id whose reservation the server resolved (expired): the claim "
             "is answered 200 {resolution}; then, one variant each, the 200 with %s"
             % ", ".join(label for label, _ in _resolution_variants()),
       expected="valid: no status read, upload or report, no runner, slot-0.json gone, the next claim with a fresh "
                "id within 0.1 s plus the machine's slack (poll interval and error delay %.0f s); malformed: the "
                "next claim with the same id, slot-0.json claiming" % LONG_WAIT_S)
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res, request_id = _planted_resolved_claim(plane)
    # Act
    plane.start(poll_s=LONG_WAIT_S, error_delay_s=LONG_WAIT_S)
    claims = plane.wait_claims(2)
    # Assert
    ctx.expect(claims[0].status == 200 and _claim_id(claims[0]) == request_id,
               expected="the first claim replays %s and is answered 200" % request_id,
               actual=lambda: "it carried %s, answered %s" % (_claim_id(claims[0]), claims[0].status),
               diagnosis="a persisted claiming state is claimed again with its id (SCAN-CLAIM-3)")
    mutations = calls(plane, "status") + calls(plane, "bundle") + calls(plane, "terminal")
    ctx.expect(not mutations and not runner_roots(plane),
               expected="no status read, upload or report for reservation %d, and no runner" % res.reservation_id,
               actual=lambda: "%s; roots %s" % (describe_run(plane), runner_roots(plane)),
               diagnosis="a 200 says the assignment is already over: nothing more is done for it")
    gap = wait_between(plane, claims[0], claims[1])
    ctx.expect(_claim_id(claims[1]) not in (None, request_id) and gap <= 0.1 + SCHEDULE_SLACK_S,
               expected="the next claim with a fresh id, within %.1f s" % (0.1 + SCHEDULE_SLACK_S),
               actual="id %s, %.3f s after the 200" % (_claim_id(claims[1]), gap),
               diagnosis="a valid resolution deletes the state and is work: the slot claims again at once with a "
                         "new id, without waiting the poll interval (SCAN-BACKOFF-4)")

    def act(label, change):
        # Arrange
        plane = ctx.plane()
        res, request_id = _planted_resolved_claim(plane)
        doc = dict(res.status_doc())
        doc.update(change)
        # Claims 1 and 2 both get it, so slot-0.json is read while the claim is still unanswered.
        plane.server.script("claim", 200, {"resolution": doc}, first=2)
        # Act
        plane.start(error_delay_s=QUICK_ERROR_DELAY_S)
        claims = plane.wait_claims(2)
        # Assert
        _expect_same_id_retried(ctx, plane, claims, "a 200 whose %s" % label)
        plane.life.kill()
    each_variant(ctx, _resolution_variants(), act)


def _assignment_variants(doc):
    def reservation(**changes):
        new = json.loads(json.dumps(doc))
        for key, value in changes.items():
            if value is DELETE:
                new["reservation"].pop(key)
            else:
                new["reservation"][key] = value
        return {"assignment": new}
    too_big = json.loads(json.dumps(doc))
    too_big["note"] = "\u00e9" * int(_deploy.MAX_PENDING_BYTES * WIDE_SHARE)  # the bound in force (D30)
    return [
        ("no assignment member", {"ok": True}),
        ("assignment []", {"assignment": []}),
        ("reservation_id 0", reservation(reservation_id=0)),
        ("reservation_id with a fraction", reservation(reservation_id=doc["reservation"]["reservation_id"] + 0.5)),
        ("reservation_id true", reservation(reservation_id=True)),
        ("no bundle_id", reservation(bundle_id=DELETE)),
        ("scan_event_id of 31 hex digits", reservation(scan_event_id="c" * 31)),
        ("a canonical state over MAX_PENDING_BYTES", json.dumps({"assignment": too_big}, ensure_ascii=False,
                                                    sort_keys=True, separators=(",", ":")).encode("utf-8")),
    ]


@check("claim.assignment-checked", clauses=["SCAN-CLAIM-6", "SCAN-STATE-4"], level="MUST",
       title="a 201 is kept only with a usable reservation identity and a state that fits; then the status read",
       fakes="the first claim answered 201 with a good assignment, the worker SIGKILLed at its status read; then "
             "on fresh planes a 201 that is one of: no assignment, [], reservation_id 0, with a fraction or true, no bundle_id, a "
             "31-hex scan_event_id, an assignment whose state would exceed 1 MiB",
       expected="good: slot-0.json is {schema 2, assigned, the assignment as served, runner null, retained_work []} "
                "when the status read arrives; each bad one: the next claim with the same id, slot-0.json claiming, "
                "no status read")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    # Act
    life = plane.start(kill_at=plane.held("status"))
    life.wait(PHASE_TIMEOUT_S)
    # Assert
    held = calls(plane, "status")
    state = plane.slot_state(0) or {}
    wanted = {"schema": 2, "phase": "assigned", "assignment": res.doc, "runner": None, "retained_work": []}
    ctx.expect(life.fired and held and state == wanted,
               expected="slot-0.json = the assigned state holding the assignment as served, when the status read "
                        "arrived",
               actual=lambda: "slot-0.json %r (%s)" % ((plane.slot_raw(0) or b"")[:200], describe_run(plane)),
               diagnosis="a valid assignment is persisted whole before the status read that depends on it "
                         "(SCAN-STATE-4)")
    template = plane.add_assignment(queued=False).build(time.time())[0]

    def act(label, body):
        # Arrange
        plane = ctx.plane()
        # Claims 1 and 2 both get it, so slot-0.json is read while the claim is still unanswered.
        plane.server.script("claim", 201, body, first=2)
        # Act
        plane.start(error_delay_s=QUICK_ERROR_DELAY_S)
        claims = plane.wait_claims(2)
        # Assert
        _expect_same_id_retried(ctx, plane, claims, "a 201 with %s" % label)
        plane.life.kill()
    each_variant(ctx, _assignment_variants(template), act)
