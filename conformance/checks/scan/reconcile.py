"""Status and reconciliation: the status read first, resolutions checked against what the slot
holds, cleanup, and what 404, 409, 410 and other errors on a mutation mean (SCAN-RECONCILE-1 to
SCAN-RECONCILE-9).

After a crash the worker cannot know whether its last upload or report arrived; the server can.
So a slot holding an assignment asks first, believes a resolution only when it binds the
reservation and the bytes or report the slot holds (anything else is kept for an operator), and
treats a refused mutation by asking again: 404 or a reservation no longer scanning is stale work,
409 gets two strikes keyed by code (counted across restarts), 410 waits for the server, and any
other error is simply retried later with the same bytes. Most checks here plant the slot states
(a reservation granted without a claim, a ready bundle beside it) so that several slots, each in
its own case, run in one life; the crash matrix (crash.py) covers the kills between steps.
"""

import hashlib
import signal

from conformance import lifecycle as _lifecycle
from conformance.checks import check
from conformance.checks.scan._common import (PHASE_TIMEOUT_S, PLANTED_REPORT, SCHEDULE_SLACK_S, describe_run,
                                             held_state, lines_of, plant_ready_bundle, read_bytes, ready_path)
from conformance.planes.scan import canonical

# SCAN-OUTPUT-1: the lines of a slot's end of a reservation, and of a step that failed validation.
STALE_LINE = "worker slot %d: reservation %d discarded as stale"
RESOLVED_LINE = "worker slot %d: reservation %d resolved (%s)"
VALIDATION_LINE = "worker slot %d: worker protocol or state validation failed"
# How many failed steps (each a status read and the validation line) show a state is kept.
REPEATS = 2
# How many status reads show a slot awaiting resolution only polls.
POLLS = 3
# An error delay long enough that a status read "at once" (within SCHEDULE_SLACK_S of the
# refused mutation) cannot be the next step's: the first delay is at least half of it.
LONG_ERROR_DELAY_S = 4.0
# An error delay whose lower bound (half of it) a check measures, small enough to keep it short.
MEASURED_ERROR_DELAY_S = 2.0
# A poll interval long enough that a kill lands between the first 409 and the retry it schedules.
SLOW_POLL_S = 3.0
# A poll interval that leaves the first strike on disk long enough to be seen by a poll of the file.
VISIBLE_POLL_S = 1.0
# SCAN-RECONCILE-9: the stale record's exact members.
STALE_KEYS = ["bundle_id", "code", "outcome", "recorded_at", "reservation_id", "scan_event_id", "schema",
              "status_code"]
REPORT_DIGEST = hashlib.sha256(canonical(PLANTED_REPORT)).hexdigest()
MUTATIONS = ("bundle", "terminal")


def plant(plane, slot, phase, ready=True, **members):
    """A reservation granted without a claim and slot's state holding it in phase (with a ready
    bundle for bundle_ready unless ready is False, the planted report for terminal_pending, a 410
    stale for awaiting_resolution); returns the Reservation."""
    res = plane.add_assignment(queued=False)
    _request_id, doc = plane.grant(res)
    if phase == "bundle_ready" and "bundle" not in members:
        members["bundle"] = plant_ready_bundle(plane, res, slot, write=ready)
    if phase == "terminal_pending" and "terminal" not in members:
        members["terminal"] = dict(PLANTED_REPORT)
    if phase == "awaiting_resolution" and "stale" not in members:
        members["stale"] = {"status_code": 410, "code": "assignment_expired"}
    plane.write_slot(slot, held_state(doc, phase, **members))
    return res


def requests_for(plane, res, verbs=("status",) + MUTATIONS):
    return [c for c in plane.server.calls(reservation=res) if c.verb in verbs]


def _first_verbs(plane, res, n=4):
    return ", ".join("%s %s" % (c.verb, c.status) for c in requests_for(plane, res)[:n]) or "none"


def _holds(plane, slot, res):
    """slot's file still holds res (a claiming state, or another reservation, is the slot's next work)."""
    raw = plane.slot_raw(slot)
    if raw is None:
        return False
    state = plane.slot_state(slot)
    if not isinstance(state, dict):
        return True
    reservation = (state.get("assignment") or {}).get("reservation") or {}
    return state.get("phase") != "claiming" and reservation.get("reservation_id") in (None, res.reservation_id)


def wait_released(plane, slot, res):
    """Once slot no longer holds res (its file gone, or the slot's next claim)."""
    plane.wait_for(lambda: not _holds(plane, slot, res),
                   "slot %d done with reservation %d" % (slot, res.reservation_id))


def expect_gone(ctx, plane, slot, res, line, bundle=True):
    """The slot's state, its stale record and (bundle) its ready bundle are gone; line printed."""
    left = [name for name, there in (("slot-%d.json" % slot, _holds(plane, slot, res)),
                                     ("slot-%d-stale.json" % slot, plane.slot_raw(slot, stale=True) is not None),
                                     ("the ready bundle", bundle and read_bytes(ready_path(plane, res)) is not None))
            if there]
    ctx.expect(not left, expected="slot %d cleaned up (reservation %d)" % (slot, res.reservation_id),
               actual=lambda: "still there: %s" % ", ".join(left),
               diagnosis="delete the ready bundle, then the state (and the stale record after it)")
    ctx.expect(lines_of(plane.life, line) == 1, expected="the line %r once" % line,
               actual=lambda: "stdout: %r" % plane.life.proc.stdout_text()[-300:],
               diagnosis="print the line %r once, when the slot's cleanup is done" % line)


def expect_no_mutation(ctx, plane, res, why):
    sent = requests_for(plane, res, MUTATIONS)
    ctx.expect(not sent, expected="no upload or report for reservation %d (%s)" % (res.reservation_id, why),
               actual=lambda: "%d sent: %s" % (len(sent), ", ".join("%s -> %s" % (c.verb, c.status) for c in sent)),
               diagnosis="a resolution or a stale answer ends the work: nothing more is sent")


@check("reconcile.status-first", clauses=["SCAN-RECONCILE-1"], level="MUST",
       title="every slot holding an assignment reads its status before any upload, report or scan",
       fakes="four slots hold a granted reservation each, in phases assigned, bundle_ready (ready bundle on "
             "disk), terminal_pending and awaiting_resolution; the server answers each status scanning",
       expected="for each reservation the first request (progress aside) is GET its status; the first three "
                "then complete (bundle, bundle, report) and the fourth only polls until it is expired")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    phases = ["assigned", "bundle_ready", "terminal_pending", "awaiting_resolution"]
    held = [plant(plane, slot, phase) for slot, phase in enumerate(phases)]
    # Act
    plane.start(parallelism=len(phases))
    for res in held[:3]:
        plane.wait_resolved(res)
    plane.wait_calls("status", POLLS, reservation=held[3])
    plane.resolve(held[3], "expired")
    wait_released(plane, 3, held[3])
    plane.stop(signal.SIGINT)
    # Assert
    for slot, (phase, res) in enumerate(zip(phases, held)):
        seen = requests_for(plane, res)
        ctx.expect(seen and seen[0].verb == "status",
                   expected="reservation %d (%s) asked with GET status first" % (res.reservation_id, phase),
                   actual=lambda: "its first requests: %s" % _first_verbs(plane, res),
                   diagnosis="every step of a slot holding an assignment begins with its status read")
    wanted = [("assigned", "bundle_accepted"), ("bundle_ready", "bundle_accepted"),
              ("terminal_pending", "prebundle_report"), ("awaiting_resolution", "expired")]
    for res, (phase, resolution) in zip(held, wanted):
        ctx.expect(res.resolution == resolution, expected="%s resumed to %s" % (phase, resolution),
                   actual=lambda: describe_run(plane),
                   diagnosis="resume each held phase from its status read to the resolution the server gives: the "
                             "upload, the report, or the cleanup")
    expect_no_mutation(ctx, plane, held[3], "awaiting resolution")


@check("reconcile.status-gone", clauses=["SCAN-RECONCILE-1", "SCAN-RECONCILE-9"], level="MUST",
       title="a status read answered 404, 409 or 410 discards the assignment as stale at once",
       fakes="three slots hold a granted reservation (bundle_ready with its ready bundle, terminal_pending, "
             "assigned); every status read of the first is answered 404, of the second 409, of the third 410",
       expected="each state, its ready bundle and its stale record are gone after one status read; no upload, "
                "report or scan; each slot prints the discarded line")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    cases = [("bundle_ready", 404, "not_found"), ("terminal_pending", 409, "reservation_conflict"),
             ("assigned", 410, "assignment_expired")]
    held = []
    for slot, (phase, status, code) in enumerate(cases):
        res = plant(plane, slot, phase)
        plane.set_status(res, status_error=(status, code))
        held.append(res)
    # Act
    plane.start(parallelism=len(cases))
    for slot, res in enumerate(held):
        wait_released(plane, slot, res)
    plane.stop(signal.SIGINT)
    # Assert
    for slot, ((phase, status, _code), res) in enumerate(zip(cases, held)):
        expect_gone(ctx, plane, slot, res, STALE_LINE % (slot, res.reservation_id))
        expect_no_mutation(ctx, plane, res, "status %d" % status)
        reads = requests_for(plane, res, ("status",))
        ctx.expect(len(reads) == 1, expected="one status read for %s answered %d" % (phase, status),
                   actual=lambda: "%d status reads" % len(reads), diagnosis="404, 409 and 410 are stale at once")
    work = plane.listing("work")
    ctx.expect(not [n for n in work if n.startswith("worker-assignment-2-")],
               expected="no runner root for the assigned reservation answered 410",
               actual=lambda: "work tree: %s" % ", ".join(work),
               diagnosis="a reservation found stale (404, 409, 410) is cleaned up without starting a runner for it")


def _mismatches(plane, held):
    """(label, status members) of resolutions that do not bind the slot's reservation."""
    return [("another bundle_id", {"bundle_id": "ab" * 16}),
            ("another scan_event_id", {"scan_event_id": "cd" * 16}),
            ("another reservation_id", {"reservation_id": held.reservation_id + 1000}),
            ("a receipt_id that is not a digest", {"receipt_id": "receipt-1"})]


@check("reconcile.resolution-mismatch", clauses=["SCAN-RECONCILE-2"], level="MUST",
       title="a resolution naming another bundle, scan event, reservation, or with a bad receipt keeps the state",
       fakes="four slots hold an assigned reservation each; the server says each is expired, but with another "
             "bundle_id, another scan_event_id, another reservation_id, a receipt_id that is not a digest",
       expected="each state file stays byte for byte while the slot reads the status again and again and prints "
                "the validation line; nothing is sent")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    cases = []
    for slot in range(4):
        res = plant(plane, slot, "assigned")
        label, members = _mismatches(plane, res)[slot]
        plane.resolve(res, "expired")
        plane.set_status(res, **members)
        cases.append((slot, label, res, plane.slot_raw(slot)))
    # Act
    life = plane.start(parallelism=len(cases))
    plane.wait_for(lambda: all(lines_of(life, VALIDATION_LINE % slot) >= REPEATS for slot, _l, _r, _b in cases),
                   "the validation line %d times for each slot" % REPEATS, timeout=PHASE_TIMEOUT_S + SCHEDULE_SLACK_S)
    plane.stop(signal.SIGINT)
    # Assert
    for slot, label, res, before in cases:
        ctx.expect(plane.slot_raw(slot) == before, expected="slot-%d.json unchanged (%s)" % (slot, label),
                   actual=lambda: "it is now %r" % ((plane.slot_raw(slot) or b"gone")[:120],),
                   diagnosis="a resolution is believed only when it names the reservation the slot holds")
        reads = requests_for(plane, res, ("status",))
        ctx.expect(len(reads) >= REPEATS, expected="the status read again after the error delay (%s)" % label,
                   actual=lambda: "%d status read(s)" % len(reads),
                   diagnosis="a status the worker cannot validate is no resolution: keep the state, wait the error "
                             "delay and read the status again")
        expect_no_mutation(ctx, plane, res, label)


@check("reconcile.accepted-bytes", clauses=["SCAN-RECONCILE-3", "SCAN-RECONCILE-5"], level="MUST",
       title="bundle_accepted is believed only for the bytes of the ready bundle; then bundle and state go",
       fakes="slot 0 holds bundle_ready with its ready bundle; the server says bundle_accepted with another "
             "payload_sha256, then (after the slot kept its state twice) with the bundle's own",
       expected="while the digest differs: state and ready bundle kept byte for byte, no upload; once it "
                "matches: the ready bundle and the state are deleted and the resolved line printed, still no "
                "upload")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plant(plane, 0, "bundle_ready")
    state_before, bundle_before = plane.slot_raw(0), read_bytes(ready_path(plane, res))
    plane.resolve(res, "bundle_accepted", payload_sha256="ee" * 32)
    # Act
    life = plane.start()
    plane.wait_for(lambda: lines_of(life, VALIDATION_LINE % 0) >= REPEATS, "the validation line %d times" % REPEATS)
    state_kept, bundle_kept = plane.slot_raw(0), read_bytes(ready_path(plane, res))
    plane.resolve(res, "bundle_accepted", payload_sha256=hashlib.sha256(bundle_before).hexdigest())
    wait_released(plane, 0, res)
    plane.stop()
    # Assert
    ctx.expect(state_kept == state_before and bundle_kept == bundle_before,
               expected="the state and the ready bundle kept while bundle_accepted names other bytes",
               actual=lambda: "state %s, ready bundle %s" % ("kept" if state_kept == state_before else "changed",
                                                            "kept" if bundle_kept == bundle_before else "changed"),
               diagnosis="compare payload_sha256 with the SHA-256 of the ready bundle before believing it")
    expect_gone(ctx, plane, 0, res, RESOLVED_LINE % (0, res.reservation_id, "bundle_accepted"))
    expect_no_mutation(ctx, plane, res, "the server already holds the bundle")


@check("reconcile.report-binding", clauses=["SCAN-RECONCILE-4"], level="MUST",
       title="prebundle_report is believed only for the report held: its failure code and its digest (D3)",
       fakes="slots hold: terminal_pending (resolution with another failure_code), terminal_pending (another "
             "payload_sha256), terminal_pending (the report's own), awaiting_resolution with the report (its "
             "own: D3), assigned with no report; the wrong ones are corrected afterwards",
       expected="the matching two are cleaned up with no report sent; the three others keep their state byte "
                "for byte until the server's answer binds (then the two reports clear); nothing is sent")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    cases = [("terminal_pending", {"failure_code": "client_storage_failed", "payload_sha256": REPORT_DIGEST}, False),
             ("terminal_pending", {"failure_code": "client_process_failed", "payload_sha256": "ee" * 32}, False),
             ("terminal_pending", {"failure_code": "client_process_failed", "payload_sha256": REPORT_DIGEST}, True),
             ("awaiting_resolution", {"failure_code": "client_process_failed", "payload_sha256": REPORT_DIGEST},
              True),
             ("assigned", {"failure_code": "client_process_failed", "payload_sha256": REPORT_DIGEST}, False)]
    held = []
    for slot, (phase, fields, _clears) in enumerate(cases):
        extra = {"terminal": dict(PLANTED_REPORT)} if phase == "awaiting_resolution" else {}
        res = plant(plane, slot, phase, **extra)
        plane.resolve(res, "prebundle_report", **fields)
        held.append((slot, phase, fields, res, plane.slot_raw(slot)))
    # Act
    life = plane.start(parallelism=len(cases))
    kept = [entry for entry, case in zip(held, cases) if not case[2]]
    plane.wait_for(lambda: all(lines_of(life, VALIDATION_LINE % e[0]) >= REPEATS for e in kept)
                   and all(not _holds(plane, e[0], e[3]) for e, c in zip(held, cases) if c[2]),
                   "the binding reports cleared and the others refused %d times" % REPEATS,
                   timeout=PHASE_TIMEOUT_S + SCHEDULE_SLACK_S)
    snapshot = dict((e[0], plane.slot_raw(e[0]) if _holds(plane, e[0], e[3]) else None) for e in held)
    for slot in (0, 1):
        plane.resolve(held[slot][3], "prebundle_report", failure_code="client_process_failed",
                      payload_sha256=REPORT_DIGEST)
    wait_released(plane, 0, held[0][3])
    wait_released(plane, 1, held[1][3])
    plane.stop(signal.SIGINT)
    # Assert
    for (slot, phase, fields, res, before), (_p, _f, clears) in zip(held, cases):
        what = "%s, resolution %s %s" % (phase, fields["failure_code"],
                                        "with the report's digest" if fields["payload_sha256"] == REPORT_DIGEST
                                        else "with another digest")
        if clears:
            ctx.expect(snapshot[slot] is None, expected="slot %d cleaned up (%s)" % (slot, what),
                       actual=lambda: "its state is still there: %r" % (plane.slot_raw(slot) or b"")[:120],
                       diagnosis="a prebundle_report that binds the report held resolves it (in "
                                 "awaiting_resolution too: D3)")
        else:
            ctx.expect(snapshot[slot] == before, expected="slot %d kept byte for byte (%s)" % (slot, what),
                       actual=lambda: "it is %r" % ((snapshot[slot] or b"gone")[:120],),
                       diagnosis="believe prebundle_report only with the report's failure code and the digest of "
                                 "its canonical bytes")
        expect_no_mutation(ctx, plane, res, what)
    ctx.expect(plane.slot_raw(4) is not None, expected="the assigned slot (no report held) still kept",
               actual="its state is gone",
               diagnosis="keep a slot's state when the resolution does not concern what it holds")


@check("reconcile.cleanup-crash-window", clauses=["SCAN-RECONCILE-5"], level="MUST",
       title="a resolution whose ready bundle is already gone (a crash between the deletions) is finished",
       fakes="slot 0 holds bundle_ready whose ready bundle is missing, the server says bundle_accepted; slot 1 "
             "holds bundle_ready with its ready bundle, the server says expired",
       expected="both states are deleted with no upload and no report; slot 1's ready bundle is deleted too; "
                "each slot prints its resolved line")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    gone = plant(plane, 0, "bundle_ready", ready=False)
    plane.resolve(gone, "bundle_accepted", payload_sha256=hashlib.sha256(b"the bytes sent before").hexdigest())
    ready = plant(plane, 1, "bundle_ready")
    plane.resolve(ready, "expired")
    # Act
    plane.start(parallelism=2)
    wait_released(plane, 0, gone)
    wait_released(plane, 1, ready)
    plane.stop()
    # Assert
    expect_gone(ctx, plane, 0, gone, RESOLVED_LINE % (0, gone.reservation_id, "bundle_accepted"))
    expect_gone(ctx, plane, 1, ready, RESOLVED_LINE % (1, ready.reservation_id, "expired"))
    for res in (gone, ready):
        expect_no_mutation(ctx, plane, res, "resolved")


def _status_at_once(ctx, plane, res, verb, what):
    """The status read that follows a refused mutation came within SCHEDULE_SLACK_S of its answer."""
    calls = requests_for(plane, res, ("status", verb))
    refused = [i for i, c in enumerate(calls) if c.verb == verb]
    index = refused[0] if refused else None
    after = calls[index + 1] if index is not None and index + 1 < len(calls) else None
    gap = (after.t - calls[index].exchange.t_end) if after is not None and calls[index].exchange.t_end else None
    ctx.expect(after is not None and after.verb == "status" and gap is not None and gap <= SCHEDULE_SLACK_S,
               expected="a status read at once after the %s answered %s (within %.1f s)" % (verb, what,
                                                                                         SCHEDULE_SLACK_S),
               actual=lambda: "next: %s" % ("nothing" if after is None else "%s after %s s" % (
                   after.verb, "%.2f" % gap if gap is not None else "?")),
               diagnosis="404, 409 and 410 on a mutation are followed by a status read, not by the error delay")


@check("reconcile.mutation-gone", clauses=["SCAN-RECONCILE-6", "SCAN-RECONCILE-9"], level="MUST",
       title="an upload or report answered 404, or 409 while the reservation is no longer scanning, is stale",
       fakes="slot 0: its upload answered 404; slot 1: its upload answered 409 while the status says expired "
             "(unresolved); slot 2: its report answered 404; the error delay is long",
       expected="each refusal is followed at once by a status read, then the state and its ready bundle are "
                "deleted, the discarded line printed; no second upload, no report for stale work")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    server = plane.server
    first = plant(plane, 0, "bundle_ready")
    server.add_fault(server.error_answer(404, "not_found"), server.bundle_match(first, first=1))
    second = plant(plane, 1, "bundle_ready")
    plane.set_status(second, state="expired")
    server.add_fault(server.error_answer(409, "bundle_conflict"), server.bundle_match(second, first=1))
    third = plant(plane, 2, "terminal_pending")
    server.add_fault(server.error_answer(404, "not_found"), server.terminal_match(third, first=1))
    cases = [(0, first, "bundle", "404"), (1, second, "bundle", "409"), (2, third, "terminal", "404")]
    # Act
    plane.start(parallelism=3, error_delay_s=LONG_ERROR_DELAY_S)
    for slot, res, _verb, _what in cases:
        wait_released(plane, slot, res)
    plane.stop(signal.SIGINT)
    # Assert
    for slot, res, verb, what in cases:
        _status_at_once(ctx, plane, res, verb, what)
        expect_gone(ctx, plane, slot, res, STALE_LINE % (slot, res.reservation_id))
        sent = requests_for(plane, res, MUTATIONS)
        ctx.expect(len(sent) == 1, expected="only the refused %s for reservation %d" % (verb, res.reservation_id),
                   actual=lambda: ", ".join("%s -> %s" % (c.verb, c.status) for c in sent),
                   diagnosis="stale work is dropped: no retry and no terminal report")


def _conflict_of(plane, slot):
    state = plane.slot_state(slot) or {}
    return state.get("transport_conflict")


@check("reconcile.two-strikes", clauses=["SCAN-RECONCILE-7", "SCAN-RECONCILE-6"], level="MUST",
       title="409 while scanning: the first strike is persisted, the same code twice ends the mutation",
       fakes="slot 0: two uploads answered 409 bundle_conflict; slot 1: uploads answered 409 code_a then 409 "
             "code_b; slot 2: two reports answered 409 terminal_conflict; slot 3: one upload answered 409 with "
             "a code that is not an error code; every status says scanning",
       expected="slot 0: transport_conflict {409, bundle_conflict, 1} on disk, the same bytes again, then a "
                "report client_process_failed with a client_result_conflict diagnostic; slot 1: a third upload, "
                "accepted; slot 2: awaiting_resolution with stale {409, terminal_conflict}; slot 3: the code "
                "kept as request_rejected")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    server = plane.server
    twice = plant(plane, 0, "bundle_ready")
    server.add_fault(server.error_answer(409, "bundle_conflict"), server.bundle_match(twice, first=2))
    changed = plant(plane, 1, "bundle_ready")
    server.add_fault(server.error_answer(409, "code_a"), server.bundle_match(changed, first=1))
    server.add_fault(server.error_answer(409, "code_b"), server.bundle_match(changed, first=1))  # the next one
    report = plant(plane, 2, "terminal_pending")
    server.add_fault(server.error_answer(409, "terminal_conflict"), server.terminal_match(report, first=2))
    foreign = plant(plane, 3, "bundle_ready")
    server.add_fault(server.error_answer(409, "Not A Code!"), server.bundle_match(foreign, first=1))
    seen = dict((slot, []) for slot in range(4))

    def observe():
        for slot in seen:
            conflict = _conflict_of(plane, slot)
            if conflict is not None and conflict not in seen[slot]:
                seen[slot].append(conflict)
        return True

    # Act
    plane.start(parallelism=4, poll_s=VISIBLE_POLL_S)
    plane.wait_for(lambda: observe() and all(r.resolution for r in (twice, changed, foreign))
                   and ((plane.slot_state(2) or {}).get("phase") == "awaiting_resolution" or report.resolution),
                   "slots 0, 1 and 3 resolved and slot 2 awaiting resolution",
                   timeout=PHASE_TIMEOUT_S + 4 * VISIBLE_POLL_S)
    awaiting = plane.slot_state(2) or {}
    plane.resolve(report, "prebundle_report", failure_code="client_process_failed", payload_sha256=REPORT_DIGEST)
    wait_released(plane, 2, report)
    plane.stop(signal.SIGINT)
    # Assert
    first_strike = {"status_code": 409, "code": "bundle_conflict", "attempts": 1}
    ctx.expect(first_strike in seen[0], expected="slot 0's first strike on disk: %s" % first_strike,
               actual=lambda: "transport_conflict seen: %s" % (seen[0] or "none"),
               diagnosis="persist transport_conflict with attempts 1 before the retry, so a restart counts it")
    puts = twice.puts
    ctx.expect(len(puts) == 2 and puts[0].body_sha256 == puts[1].body_sha256 and len(twice.terminals) == 1,
               expected="slot 0: the same bytes uploaded twice, then one report",
               actual=lambda: "%d upload(s), %d report(s): %s" % (len(puts), len(twice.terminals),
                                                               _first_verbs(plane, twice, 8)),
               diagnosis="after a first 409 on an upload, read the status, then upload the same bytes once more; a "
                         "second 409 with that code ends it in a report")
    doc = twice.terminals[0].doc or {}
    codes = [d.get("code") for d in doc.get("diagnostics") or [] if isinstance(d, dict)]
    ctx.expect(doc.get("failure_code") == "client_process_failed" and "client_result_conflict" in codes,
               expected="slot 0's report: client_process_failed with a client_result_conflict diagnostic",
               actual=lambda: "failure_code %r, diagnostic codes %r" % (doc.get("failure_code"), codes),
               diagnosis="the second 409 with the same code ends the upload in a terminal report")
    ctx.expect(len(changed.puts) == 3 and changed.resolution == "bundle_accepted" and not changed.terminals,
               expected="slot 1: a third upload after 409 code_a then 409 code_b, accepted, no report",
               actual=lambda: _first_verbs(plane, changed, 8),
               diagnosis="a 409 with a different code starts the count again at 1")
    ctx.expect(awaiting.get("stale") == {"status_code": 409, "code": "terminal_conflict"}
               and "transport_conflict" not in awaiting and len(requests_for(plane, report, ("terminal",))) == 2,
               expected="slot 2 after two reports refused 409: awaiting_resolution, stale {409, terminal_conflict}",
               actual=lambda: "%s; state %r" % (_first_verbs(plane, report, 8), canonical(awaiting)[:200]),
               diagnosis="after two 409 refusals of the report with the same code, record stale {409, "
                         "terminal_conflict} and wait for the server")
    ctx.expect({"status_code": 409, "code": "request_rejected", "attempts": 1} in seen[3],
               expected="slot 3's first strike counted as request_rejected (D4)",
               actual=lambda: "transport_conflict seen: %s" % (seen[3] or "none"),
               diagnosis="a code that is not an error code is kept as request_rejected")


@check("reconcile.strike-survives-restart", clauses=["SCAN-RECONCILE-7"], level="MUST",
       title="the first 409 strike survives a crash: after a restart the second 409 goes straight to the report",
       fakes="slot 0 holds bundle_ready; its first two uploads are answered 409 bundle_conflict; the worker is "
             "SIGKILLed once the first strike is on disk (the poll interval keeps the retry away) and restarted",
       expected="the restarted worker uploads once, is refused, and sends the terminal report with no third "
                "upload")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    server = plane.server
    res = plant(plane, 0, "bundle_ready")
    server.add_fault(server.error_answer(409, "bundle_conflict"), server.bundle_match(res, first=2))
    strike = _lifecycle.when(lambda: _conflict_of(plane, 0) is not None, "the first strike on disk")
    # Act
    first = plane.start(kill_at=strike, poll_s=SLOW_POLL_S)
    plane.wait_for(lambda: not first.running() or res.resolution is not None, "the crash after the first 409",
                   running=False)
    ctx.expect(first.fired and len(res.puts) == 1, expected="the crash once the first 409's strike is on disk",
               actual=lambda: "no strike on disk before %s" % describe_run(plane),
               diagnosis="persist transport_conflict with attempts 1 before the retry")
    first.wait(PHASE_TIMEOUT_S)
    second = plane.restart()
    plane.wait_resolved(res)
    plane.stop()
    # Assert
    later = [c for c in requests_for(plane, res, MUTATIONS) if c.t >= second.t_start]
    verbs = [c.verb for c in later]
    ctx.expect(verbs == ["bundle", "terminal"] and res.resolution == "prebundle_report",
               expected="after the restart: one upload (refused 409), then the report",
               actual=lambda: "after the restart: %s" % (", ".join("%s -> %s" % (c.verb, c.status) for c in later)),
               diagnosis="read transport_conflict back from disk: a 409 with the same code is the second strike")


@check("reconcile.gone-waits", clauses=["SCAN-RECONCILE-8", "SCAN-RECONCILE-6"], level="MUST",
       title="a mutation answered 410 sets awaiting_resolution: only status reads until the server resolves",
       fakes="slot 0: its upload answered 410 assignment_expired; slot 1: its report answered 410; the status "
             "says scanning (unresolved) until the check resolves both expired",
       expected="awaiting_resolution with stale {410, assignment_expired} (slot 1 keeps its report); several "
                "status reads and no other mutation; after the resolution both are cleaned up")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    server = plane.server
    upload = plant(plane, 0, "bundle_ready")
    server.add_fault(server.error_answer(410, "assignment_expired"), server.bundle_match(upload, first=1))
    report = plant(plane, 1, "terminal_pending")
    server.add_fault(server.error_answer(410, "assignment_expired"), server.terminal_match(report, first=1))
    held = [(0, upload, "bundle"), (1, report, "terminal")]
    # Act
    plane.start(parallelism=2)
    for slot, res, _verb in held:
        plane.wait_phase(slot, "awaiting_resolution")
    states = dict((slot, plane.slot_state(slot)) for slot, _res, _verb in held)
    marks = dict((slot, len(requests_for(plane, res, ("status",)))) for slot, res, _verb in held)
    for slot, res, _verb in held:
        plane.wait_calls("status", marks[slot] + POLLS, reservation=res)
    for _slot, res, _verb in held:
        plane.resolve(res, "expired")
    for slot, res, _verb in held:
        wait_released(plane, slot, res)
    plane.stop()
    # Assert
    for slot, res, verb in held:
        state = states[slot] or {}
        ctx.expect(state.get("stale") == {"status_code": 410, "code": "assignment_expired"},
                   expected="slot %d awaiting_resolution with stale {410, assignment_expired}" % slot,
                   actual=lambda: "state %r" % canonical(state)[:200],
                   diagnosis="a 410 whose status is unresolved waits for the server")
        sent = requests_for(plane, res, MUTATIONS)
        ctx.expect(len(sent) == 1, expected="only the refused %s for slot %d" % (verb, slot),
                   actual=lambda: ", ".join("%s -> %s" % (c.verb, c.status) for c in sent),
                   diagnosis="awaiting resolution, a slot sends no mutation: it only reads the status")
        _status_at_once(ctx, plane, res, verb, "410")
        expect_gone(ctx, plane, slot, res, RESOLVED_LINE % (slot, res.reservation_id, "expired"))
    ctx.expect("terminal" in (states[1] or {}), expected="slot 1 keeps its report while awaiting (D3)",
               actual=lambda: canonical(states[1] or {})[:200],
               diagnosis="keep the stored report in the state while the slot awaits the server's resolution")


@check("reconcile.other-errors-retry", clauses=["SCAN-RECONCILE-8"], level="MUST",
       title="an upload or report answered 503 is not reconciled: the same bytes again after the error delay",
       fakes="slot 0: its first upload answered 503; slot 1: its first report answered 503; error delay "
             "2 s; no Retry-After",
       expected="no status read sooner than half the error delay after the 503; then a status read and the "
                "same bytes again, accepted")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    server = plane.server
    upload = plant(plane, 0, "bundle_ready")
    server.add_fault(server.error_answer(503, "unavailable"), server.bundle_match(upload, first=1))
    report = plant(plane, 1, "terminal_pending")
    server.add_fault(server.error_answer(503, "unavailable"), server.terminal_match(report, first=1))
    # Act
    plane.start(parallelism=2, error_delay_s=MEASURED_ERROR_DELAY_S)
    plane.wait_resolved(upload, timeout=PHASE_TIMEOUT_S + 2 * MEASURED_ERROR_DELAY_S)
    plane.wait_resolved(report, timeout=PHASE_TIMEOUT_S + 2 * MEASURED_ERROR_DELAY_S)
    wait_released(plane, 0, upload)
    wait_released(plane, 1, report)
    plane.stop()
    # Assert
    floor = MEASURED_ERROR_DELAY_S / 2
    for slot, res, verb in ((0, upload, "bundle"), (1, report, "terminal")):
        calls = requests_for(plane, res)
        verbs = [c.verb for c in calls]
        ctx.expect(verbs == ["status", verb, "status", verb], expected="slot %d: status, %s (503), status, %s"
                                                                       % (slot, verb, verb),
                   actual=lambda: _first_verbs(plane, res, 8),
                   diagnosis="another error status is retried at the next step, after its status read")
        gap = calls[2].t - calls[1].exchange.t_end
        ctx.expect(gap >= floor, expected="the status read at least %.1f s after the 503 (the error delay)" % floor,
                   actual="%.2f s after it" % gap,
                   diagnosis="only 404, 409 and 410 ask the server at once; other errors wait the error delay")
        same = calls[1].body_sha256 == calls[3].body_sha256 if verb == "bundle" else calls[1].body == calls[3].body
        ctx.expect(same, expected="slot %d: the same bytes sent again" % slot, actual="other bytes",
                   diagnosis="a retried mutation is the same mutation")


@check("reconcile.stale-record-closes", clauses=["SCAN-RECONCILE-9"], level="MUST",
       title="a state with a stale record of its own reservation is finished with no request",
       fakes="slot 0 holds an assigned reservation and slot-0-stale.json names it (a crash after the record); "
             "slot 1 holds another with a stale record of some other reservation",
       expected="slot 0: state and record deleted, the discarded line, no status read, upload or report for its "
                "reservation; slot 1: "
                "its reservation asked and completed as usual")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    stale = plant(plane, 0, "assigned")
    record = {"schema": 1, "outcome": "discarded_stale", "reservation_id": stale.reservation_id,
              "bundle_id": stale.bundle_id, "scan_event_id": stale.scan_event_id, "status_code": 404,
              "code": "not_found", "recorded_at": "2026-01-01T00:00:00+00:00"}
    plane.write_slot(0, record, stale=True)
    live = plant(plane, 1, "assigned")
    plane.write_slot(1, dict(record, reservation_id=live.reservation_id + 1000), stale=True)
    # Act
    plane.start(parallelism=2)
    wait_released(plane, 0, stale)
    plane.wait_resolved(live)
    plane.stop(signal.SIGINT)
    # Assert
    expect_gone(ctx, plane, 0, stale, STALE_LINE % (0, stale.reservation_id), bundle=False)
    asked = requests_for(plane, stale)  # the progress thread's delivery of the journal aside
    ctx.expect(not asked, expected="no status read, upload or report for the reservation the stale record names",
               actual=lambda: "%d request(s), the first %s %s" % (len(asked), asked[0].method, asked[0].path),
               diagnosis="a slot that starts with a state and its stale record finishes the cleanup offline")
    ctx.expect(live.resolution == "bundle_accepted", expected="slot 1 ignores a record of another reservation",
               actual=lambda: describe_run(plane),
               diagnosis="a stale record of one reservation changes nothing for another: that slot uploads as usual")
