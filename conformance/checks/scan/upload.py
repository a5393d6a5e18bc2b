"""Uploads: the PUT's exact form, a bundle streamed in two passes, only the bytes adopted ever
sent, a receipt believed only when it binds, and every retry the same upload (SCAN-UPLOAD-1 to
SCAN-UPLOAD-5).

The bundle is the result of a scan the server paid for. Its digest header is the server's only
way to tell the bytes adopted from bytes that changed on disk since, and the same digest on
every retry is what lets the server answer a replay with the receipt it already gave. A worker
that holds the bundle in memory fails on the first large one; one that believes any 200 loses a
result the server never stored.

Several checks hand the worker a ready bundle of their own: a first life scans, its first PUT is
stalled before any body byte arrives (so the server holds no whole upload), the worker is killed,
and the check changes the ready file (and the state's `bundle` record) before the restart.
"""

import hashlib
import json
import os

from conformance.checks import check
from conformance.checks.scan._common import PHASE_TIMEOUT_S, describe_run, each_variant, faults
from conformance.planes.scan import build_bundle, canonical

MiB = 1 << 20
# SCAN-UPLOAD-2 asks for 256 MiB; a check moves 64 MiB (hashing and sending it takes a second or
# two): a worker that reads the bundle whole, or once per pass, still grows by 64 MiB or more.
BIG_BUNDLE_BYTES = 64 * MiB
# SCAN-UPLOAD-2: the worker's peak may grow this much over what it was before the upload.
MAX_UPLOAD_GROWTH_BYTES = 32 * MiB
# One filler event of the big bundle: about 1 KiB as a canonical line.
FILLER_PAD = "f" * 1000
# How long the big upload may take on a loaded machine: hashing and sending 64 MiB over TLS.
BIG_UPLOAD_TIMEOUT_S = 4 * PHASE_TIMEOUT_S
# How long the status read before the big upload is held back, so the check reads the worker's
# memory before the upload begins (whole seconds; well inside the default http timeout).
BASELINE_HOLD_S = 1.0
# SCAN-UPLOAD-5: the first PUT is cut after this many body bytes (less than any bundle).
RESET_AFTER_BYTES = 64


def ready_then_crash(plane, res):
    """Run until res's bundle is adopted and its first PUT has arrived, stalled before any body
    byte (so the server holds no whole upload); SIGKILL there. Returns (life, slot-0 state)."""
    plane.server.add_fault(faults.stall(after_bytes=0), plane.server.bundle_match(res, first=1))
    life = plane.start(kill_at=plane.when_calls("bundle", 1, reservation=res))
    life.wait(PHASE_TIMEOUT_S)
    return life, plane.slot_state(0)


def ready_file(plane, res):
    return os.path.join(plane.bundle_dir, "ready", "%s.jsonl" % res.bundle_id)


def plant_bundle(plane, state, data_or_writer):
    """Replace the ready bundle with other bytes (bytes, or a writer(handle) -> (size, sha256,
    events_sha256)) and the state's bundle record with theirs; returns the new record."""
    path = ready_file(plane, plane.server.reservation(state["assignment"]["reservation"]["reservation_id"]))
    with open(path, "wb") as handle:
        if callable(data_or_writer):
            size, digest, events_sha = data_or_writer(handle)
        else:
            data = data_or_writer
            handle.write(data)
            size, digest = len(data), hashlib.sha256(data).hexdigest()
            trailer = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
            events_sha = json.loads(trailer.decode("ascii"))["events_sha256"]
    record = {"bytes": size, "canonical_scan_event_hash": events_sha, "payload_sha256": digest}
    new = dict(state, bundle=record)
    plane.write_slot(0, new)
    return record


def big_bundle_writer(res, generation, size):
    """A writer for plant_bundle: a valid bundle of about `size` bytes, streamed to the file."""
    def write(handle):
        head = build_bundle(res, slot_id=0, generation=generation, events=[])
        header, rest = head.split(b"\n", 1)
        done_lines = rest.split(b"\n")[:-2]  # the target_done lines (the trailer and "" follow)
        digest, events = hashlib.sha256(), hashlib.sha256()
        count, total = 0, 0

        def put(data, event=True):
            nonlocal total
            handle.write(data)
            digest.update(data)
            total += len(data)
            if event:
                events.update(data)

        put(header + b"\n", event=False)
        while total < size:
            put(canonical({"type": "filler", "n": count, "pad": FILLER_PAD}) + b"\n")
            count += 1
        for line in done_lines:
            put(line + b"\n")
            count += 1
        put(canonical({"type": "end", "event_count": count, "events_sha256": events.hexdigest()}) + b"\n",
            event=False)
        return total, digest.hexdigest(), events.hexdigest()
    return write


def vm_hwm_bytes(pid):
    """The process's peak RSS so far (VmHWM), or None."""
    try:
        with open("/proc/%d/status" % pid) as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@check("upload.request", clauses=["SCAN-UPLOAD-1"], level="MUST",
       title="the PUT carries exactly its headers, the file's size and the digest of the bytes sent",
       fakes="one assignment with one small target; every upload accepted",
       expected="PUT .../bundle with exactly Host, Authorization, Content-Type: application/octet-stream, "
                "Content-Length, X-Truf-Payload-SHA256, Accept-Encoding: identity; Content-Length the bytes "
                "received; the digest header their SHA-256")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    # Act
    plane.start()
    plane.wait_resolved(res)
    plane.stop()
    # Assert
    ctx.expect(res.resolution == "bundle_accepted" and res.puts, expected="the bundle uploaded and accepted",
               actual=lambda: describe_run(plane),
               diagnosis="scan, write the bundle and upload it until a receipt binds it: this run ended otherwise")
    for put in res.puts:
        ctx.expect(not put.problems, expected="exactly the upload's headers",
                   actual=lambda: "; ".join(put.problems),
                   diagnosis="send only Host, Authorization, Content-Type: application/octet-stream, "
                             "Content-Length, X-Truf-Payload-SHA256 and Accept-Encoding: identity")
        ctx.expect(put.header("accept-encoding") == "identity", expected="Accept-Encoding: identity",
                   actual="Accept-Encoding: %r" % put.header("accept-encoding"),
                   diagnosis="send Accept-Encoding: identity on the upload")
        ctx.expect(put.complete and put.content_length == put.body_total,
                   expected="Content-Length equal to the bytes sent (the file's size)",
                   actual="Content-Length %r, %d bytes received" % (put.content_length, put.body_total),
                   diagnosis="announce the bundle file's exact size in Content-Length and send every byte of it")
        ctx.expect(put.digest_header == put.body_sha256,
                   expected="X-Truf-Payload-SHA256 = the SHA-256 of the bytes received (%s)" % put.body_sha256,
                   actual="X-Truf-Payload-SHA256: %r" % put.digest_header,
                   diagnosis="the digest header is the SHA-256 of the whole file, as lowercase hex")
    problems = plane.bundle_problems(res)
    ctx.expect(not problems, expected="the bundle accepted is a valid bundle of this reservation",
               actual=lambda: "; ".join(problems[:3]),
               diagnosis="upload exactly the bundle this reservation's scan wrote, header, events and trailer")


@check("upload.streamed", clauses=["SCAN-UPLOAD-2"], level="MUST",
       title="a 64 MiB bundle is uploaded with the worker's peak memory growing less than 32 MiB",
       fakes="a first life's first PUT is stalled and the worker killed; the ready bundle is replaced by a "
             "valid 64 MiB one (its state record too); the restart's status read is delayed 1 s, during which "
             "the worker's VmHWM is read",
       expected="the 64 MiB bundle accepted whole; the worker's peak RSS at its exit at most 32 MiB above the "
                "peak read before the upload")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment(declared_bundle_bytes=2 * BIG_BUNDLE_BYTES)
    _life, state = ready_then_crash(plane, res)
    ctx.expect(state is not None and state.get("phase") == "bundle_ready",
               expected="slot 0 in bundle_ready at the first PUT", actual="slot 0: %r" % (state,),
               diagnosis="persist the slot as bundle_ready before the first upload of its bundle")
    with open(ready_file(plane, res), "rb") as handle:
        generation = json.loads(handle.readline().decode("ascii"))["generation"]
    record = plant_bundle(plane, state, big_bundle_writer(res, generation, BIG_BUNDLE_BYTES))
    plane.server.add_fault(faults.delay(BASELINE_HOLD_S), plane.server.status_match(res, first=1))
    # Act
    second = plane.restart()
    plane.wait_calls("status", 1, reservation=res, since=second.t_start, answered=False)
    baseline = vm_hwm_bytes(second.proc.host_pid)
    plane.wait_resolved(res, timeout=BIG_UPLOAD_TIMEOUT_S)
    result = plane.stop()
    # Assert
    ctx.expect(res.resolution == "bundle_accepted" and res.payload_sha256 == record["payload_sha256"],
               expected="the planted 64 MiB bundle accepted", actual=lambda: describe_run(plane),
               diagnosis="upload the ready file the state records, accepted whole, however large it is")
    peak = result.maxrss_bytes
    ctx.note("upload of %d bytes: VmHWM before %s, peak RSS at exit %s" % (record["bytes"], baseline, peak))
    if baseline is None or not peak:
        ctx.fail(expected="the worker's memory readable from /proc and wait4",
                 actual="VmHWM %r, peak RSS %r" % (baseline, peak),
                 diagnosis="the harness could not read the worker's memory here (/proc and wait4), which is not the "
                           "worker's fault: rerun where they are readable")
    ctx.expect(peak - baseline <= MAX_UPLOAD_GROWTH_BYTES,
               expected="peak RSS at most %d MiB above the %.1f MiB before the upload"
                        % (MAX_UPLOAD_GROWTH_BYTES // MiB, baseline / float(MiB)),
               actual="%.1f MiB above (peak %.1f MiB)" % ((peak - baseline) / float(MiB), peak / float(MiB)),
               diagnosis="read the bundle UPLOAD_CHUNK_BYTES at a time, once to hash and once to send; never whole")


TAMPERS = [
    ("changed-byte", "local worker storage operation failed"),
    ("missing", "pending result bundle is missing"),
]


@check("upload.adopted-bytes", clauses=["SCAN-UPLOAD-3"], level="MUST",
       title="a ready bundle that changed or vanished after adoption is reported, never uploaded",
       fakes="a first life's first PUT is stalled and the worker killed; then the ready bundle gets one byte "
             "changed (same size), or is deleted; the worker restarts",
       expected="no further PUT; a terminal report client_storage_failed with detail 'local worker storage "
                "operation failed' (changed) or 'pending result bundle is missing' (deleted)")
def _(ctx):
    def act(label, detail):
        # Arrange
        plane = ctx.plane()
        res = plane.add_assignment()
        _life, state = ready_then_crash(plane, res)
        ctx.expect(state is not None and state.get("phase") == "bundle_ready",
                   expected="slot 0 in bundle_ready at the first PUT (variant %s)" % label,
                   actual="slot 0: %r" % (state,),
                   diagnosis="persist the slot as bundle_ready before the first upload of its bundle")
        path = ready_file(plane, res)
        if label == "missing":
            os.unlink(path)
        else:
            with open(path, "r+b") as handle:
                handle.seek(2)
                first = handle.read(1)
                handle.seek(2)
                handle.write(b"X" if first != b"X" else b"Y")
        # Act
        second = plane.restart()
        plane.wait_resolved(res)
        plane.stop()
        # Assert
        later = [c for c in res.puts if c.t >= second.t_start]
        ctx.expect(not later, expected="no upload of a bundle that is not the one adopted (variant %s)" % label,
                   actual="%d PUT(s) after the restart" % len(later),
                   diagnosis="hash the ready file first and compare size and digest with the state's bundle")
        ctx.expect(res.resolved_by == "terminal" and res.terminal_body is not None,
                   expected="a terminal report (variant %s)" % label, actual=lambda: describe_run(plane),
                   diagnosis="a ready bundle that changed or vanished since its adoption is reported, never uploaded")
        doc = json.loads(res.terminal_body.decode("ascii"))
        ctx.expect((doc.get("failure_code"), doc.get("detail")) == ("client_storage_failed", detail),
                   expected="failure_code client_storage_failed, detail %r (variant %s)" % (detail, label),
                   actual="failure_code %r, detail %r" % (doc.get("failure_code"), doc.get("detail")),
                   diagnosis="report a changed bundle as client_storage_failed 'local worker storage operation failed' "
                             "and a missing one as 'pending result bundle is missing'")

    each_variant(ctx, TAMPERS, act)


def _bad_receipt(res, kind):
    def body(call, status, doc):
        value = res.status_doc()
        if kind == "wrong-digest":
            value.update(resolution="bundle_accepted", state="completed", payload_sha256="0" * 64,
                         receipt_id="1" * 64)
        return 200, value
    return body


@check("upload.receipt", clauses=["SCAN-UPLOAD-4"], level="MUST",
       title="a receipt with another digest, or without a resolution, is not final: status, then the same PUT",
       fakes="the first PUT is answered 200 without the server keeping it: a receipt whose payload_sha256 is "
             "another digest, or a status with no resolution",
       expected="the ready bundle and state kept: a status read, then a second PUT of the same bytes, accepted")
def _(ctx):
    def act(label, kind):
        # Arrange
        plane = ctx.plane()
        res = plane.add_assignment()
        plane.server.script("bundle", body=_bad_receipt(res, kind), reservation=res, first=1)
        # Act
        plane.start()
        plane.wait_resolved(res)
        plane.stop()
        # Assert
        ctx.expect(len(res.puts) >= 2 and res.resolution == "bundle_accepted",
                   expected="a second PUT after the receipt that did not bind, accepted (variant %s)" % label,
                   actual=lambda: describe_run(plane),
                   diagnosis="a receipt is final only with this digest and the resolution bundle_accepted")
        first, again = res.puts[0], res.puts[1]
        between = plane.server.calls("status", reservation=res, since=first.t)
        ctx.expect(any(c.t < again.t for c in between),
                   expected="a status read between the two PUTs (variant %s)" % label,
                   actual=lambda: describe_run(plane),
                   diagnosis="after a receipt that does not bind the upload, read the reservation's status before "
                             "sending the upload again")
        ctx.expect(again.digest_header == first.digest_header and again.body_sha256 == first.body_sha256,
                   expected="the second PUT carries the same bytes and digest (variant %s)" % label,
                   actual="digests %s then %s" % (first.digest_header, again.digest_header),
                   diagnosis="send the same ready file again, with the same digest: a retried upload is the same "
                             "upload")

    each_variant(ctx, [("wrong-digest", "wrong-digest"), ("no-resolution", "no-resolution")], act)


@check("upload.same-upload", clauses=["SCAN-UPLOAD-5"], level="MUST",
       title="an upload cut mid-body, or lost with a crash, is retried with the same length, digest and bytes",
       fakes="variant reset: the first PUT is reset after 64 body bytes; variant restart: the first PUT is "
             "held unanswered (not kept) and the worker SIGKILLed and restarted",
       expected="a later PUT with the same Content-Length and X-Truf-Payload-SHA256 whose bytes hash to it, "
                "accepted; no second scan (one runner generation)")
def _(ctx):
    def act(label, crash):
        # Arrange
        plane = ctx.plane()
        res = plane.add_assignment()
        if not crash:
            plane.server.add_fault(faults.reset(after_bytes=RESET_AFTER_BYTES), plane.server.bundle_match(res, first=1))
            plane.start()
        else:
            first_life = plane.start(kill_at=plane.held("bundle", reservation=res))
            first_life.wait(PHASE_TIMEOUT_S)
            plane.restart()
        # Act
        plane.wait_resolved(res)
        plane.stop()
        # Assert
        ctx.expect(len(res.puts) >= 2 and res.resolution == "bundle_accepted",
                   expected="the upload retried and accepted (variant %s)" % label, actual=lambda: describe_run(plane),
                   diagnosis="retry an upload cut mid-body or lost with a crash until it is accepted")
        first, last = res.puts[0], res.puts[-1]
        same = all(p.content_length == first.content_length and p.digest_header == first.digest_header
                   for p in res.puts)
        ctx.expect(same and last.body_sha256 == first.digest_header,
                   expected="every PUT with Content-Length %r and digest %s, the last one's bytes hashing to it "
                            "(variant %s)" % (first.content_length, first.digest_header, label),
                   actual="; ".join("%r/%s/%s" % (p.content_length, p.digest_header, p.body_sha256) for p in res.puts),
                   diagnosis="a retry re-sends the ready file adopted, from its first byte")
        generations = set()
        for put in res.puts:
            path = res.bundle_files.get(put.body_sha256)
            if path:
                with open(path, "rb") as handle:
                    generations.add(json.loads(handle.readline().decode("ascii")).get("generation"))
        ctx.expect(len(generations) <= 1, expected="one scan: every bundle from the same generation",
                   actual="generations %s" % sorted(generations),
                   diagnosis="retry the upload of the bundle already written; never scan again for a retry")

    each_variant(ctx, [("reset", False), ("restart", True)], act)
