"""Bundles: header, events and trailer; the header names the reservation; a completed bundle accounts
for every target; the size bound, the commit and the state's record (SCAN-BUNDLE-1 to SCAN-BUNDLE-4).

The bundle is what the server stores as the scan's result, and it reads nothing else: so its
envelope must bind it to the one reservation, slot and generation that wrote it (a bundle of
another assignment, or of a fenced generation, must be told apart by its first line), its trailer
must let the server check that no event line was lost or added, and a completed bundle must say,
for each pinned target, that exactly those bytes were scanned. These checks judge only the envelope
(D23): findings are the example's, and a copy's own events pass as long as each is an object with a
string type. The bound is the server's own: `declared_bundle_bytes` is what it reserved, so a scan
whose bundle would not fit fails locally and is reported, never uploaded.
"""

import hashlib
import os

from conformance.checks import check
from conformance.checks.scan._common import PHASE_TIMEOUT_S, describe_run
from conformance.planes.scan.bundles import read_bundle

# The bound a tiny reservation declares: less than any bundle's header and trailer together, so a
# scan of any target cannot fit (SCAN-BUNDLE-4).
TINY_DECLARED_BYTES = 64


def planted_assigned(plane, slot, res):
    """Plant slot's state as `assigned` with res (granted without a claim): the worker's slot `slot`
    scans it whatever --parallelism says (a leftover slot, SCAN-SLOT-2)."""
    _request_id, doc = plane.grant(res)
    plane.write_slot(slot, {"schema": 2, "phase": "assigned", "assignment": doc, "runner": None,
                            "retained_work": []})


def report_codes(res):
    """(failure_code, [diagnostic codes]) of the last terminal report the server got for res."""
    if not res.terminals:
        return None, []
    doc = res.terminals[-1].doc if isinstance(res.terminals[-1].doc, dict) else {}
    return doc.get("failure_code"), [d.get("code") for d in doc.get("diagnostics") or [] if isinstance(d, dict)]


@check("bundle.envelope", clauses=["SCAN-BUNDLE-1", "SCAN-BUNDLE-2", "SCAN-BUNDLE-3"], level="MUST",
       title="the accepted bundle: header naming the reservation and slot, events, one target_done per target, "
             "trailer",
       fakes="a reservation of three targets (one empty) planted in slot 1, so the slot id in the header is not "
             "a default",
       expected="the server accepts a bundle whose header names the reservation, its snapshot digest and slot 1, "
                "with a target_done matching each pin in order and a trailer counting and hashing the event lines")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    targets = [plane.add_target("b.txt", b"secret = 0123456789abcdef0123\nplain\n"),
               plane.add_target("a.txt", b""),
               plane.add_target("c.txt", b"no newline at the end")]
    res = plane.add_assignment(targets=targets, queued=False)
    planted_assigned(plane, 1, res)
    # Act
    plane.start(parallelism=1)
    plane.wait_resolved(res)
    # Assert
    ctx.expect(res.resolution == "bundle_accepted", expected="the bundle accepted",
               actual=lambda: "resolution %s (%s)" % (res.resolution, describe_run(plane)),
               diagnosis="scan the targets, write the bundle, upload it and wait for its receipt: this run ended "
                         "otherwise")
    problems = plane.bundle_problems(res, slot_id=1)
    ctx.expect(problems == [], expected="a bundle with a good envelope (SCAN-BUNDLE-1..3)",
               actual=lambda: "; ".join(problems[:4]),
               diagnosis="header {format, reservation_id, bundle_id, scan_event_id, execution_snapshot_sha256, "
                         "slot_id, generation, status, timeout_phase}, events, then {type: end, event_count, "
                         "events_sha256}")


@check("bundle.record", clauses=["SCAN-BUNDLE-4", "SCAN-BUNDLE-2"], level="MUST",
       title="the adopted bundle is in <bundles>/ready/<bundle_id>.jsonl and the state records its size and digests",
       fakes="the first upload is held unanswered and the worker SIGKILLed there (slot 0 is bundle_ready), then "
             "restarted",
       expected="slot-0.json's bundle is exactly {bytes, canonical_scan_event_hash, payload_sha256} of the file in "
                "ready/ (its size, its trailer's events_sha256, its SHA-256); its header names the generation the "
                "state retains; the restarted worker uploads those very bytes")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    # Act
    first = plane.start(kill_at=plane.held("bundle"))
    first.wait(PHASE_TIMEOUT_S)
    state = plane.slot_state(0) or {}
    ready = plane.listing("bundles", "ready")
    path = os.path.join(plane.bundle_dir, "ready", "%s.jsonl" % res.bundle_id)
    data = None
    if os.path.isfile(path):
        with open(path, "rb") as handle:
            data = handle.read()
    plane.restart()
    plane.wait_resolved(res)
    # Assert
    ctx.expect(first.fired and state.get("phase") == "bundle_ready", expected="the crash at bundle_ready",
               actual=lambda: "phase %s (%s)" % (state.get("phase"), describe_run(plane)),
               diagnosis="persist the slot's state as bundle_ready, with the bundle's record, before its upload begins")
    ctx.expect(data is not None, expected="the bundle at bundles/ready/%s.jsonl" % res.bundle_id,
               actual="bundles/ready/ holds %r" % ready,
               diagnosis="adopting a bundle moves it to <bundles>/ready/<bundle_id>.jsonl before bundle_ready is saved")
    report = read_bundle(data, res)
    record = state.get("bundle")
    wanted = {"bytes": len(data), "canonical_scan_event_hash": report.events_sha256,
              "payload_sha256": hashlib.sha256(data).hexdigest()}
    ctx.expect(record == wanted, expected="the state's bundle %r" % wanted, actual="%r" % (record,),
               diagnosis="record the size, the trailer's events_sha256 and the digest of the whole file")
    retained = [name.rsplit("-", 1)[-1] for name in state.get("retained_work") or []]
    generation = (report.header or {}).get("generation")
    ctx.expect(generation in retained, expected="the header's generation is the one the state retains (%s)"
               % ", ".join(retained), actual="the header names generation %r" % (generation,),
               diagnosis="the header carries the generation that wrote it (SCAN-BUNDLE-2)")
    sent = [c.body_sha256 for c in res.puts if c.complete]
    ctx.expect(sent and set(sent) == {wanted["payload_sha256"]},
               expected="the restarted worker uploads the adopted file (%s)" % wanted["payload_sha256"][:12],
               actual="uploads with digests %r" % [s[:12] for s in sent if s],
               diagnosis="after a restart in bundle_ready, upload the bundle file the state records, byte for byte, "
                         "not a new scan")


@check("bundle.too-large", clauses=["SCAN-BUNDLE-4"], level="MUST",
       title="a bundle larger than declared_bundle_bytes is never uploaded; the reservation gets a report",
       fakes="a reservation declaring %d bundle bytes (less than any header)" % TINY_DECLARED_BYTES,
       expected="no PUT of a bundle; a terminal report client_process_failed; nothing left in bundles/ready/")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment(declared_bundle_bytes=TINY_DECLARED_BYTES)
    # Act
    plane.start()
    plane.wait_resolved(res)
    # Assert
    ctx.expect(not res.puts, expected="no bundle upload", actual="%d upload(s) of %s bytes" % (
        len(res.puts), [c.body_total for c in res.puts]),
        diagnosis="a scan whose bundle exceeds declared_bundle_bytes fails: nothing of it is uploaded")
    failure, codes = report_codes(res)
    ctx.expect(failure == "client_process_failed", expected="a terminal report client_process_failed",
               actual=lambda: "failure_code %r, diagnostics %r (%s)" % (failure, codes, describe_run(plane)),
               diagnosis="the failed scan is reported so the server can release the reservation")
    ctx.expect(plane.listing("bundles", "ready") == [], expected="no bundle in bundles/ready/",
               actual="bundles/ready/ holds %r" % plane.listing("bundles", "ready"),
               diagnosis="remove a bundle that cannot be uploaded from bundles/ready/ once its report is sent")
