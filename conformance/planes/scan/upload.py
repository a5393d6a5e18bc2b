"""The upload route of the fake scan server: bundles streamed to disk, hashed, kept and judged.

    PUT /api/v1/worker/assignments/{reservation_id}/bundle      SCAN-UPLOAD-*

A bundle is never held in memory: its body is read in blocks of BUNDLE_BLOCK_BYTES into a part
file and hashed on the way (``pace``: the first bytes at a slow link's rate), and a whole upload
whose bytes hash to its X-Truf-Payload-SHA256 is kept, once per reservation and digest, as
``bundle-<reservation>-<digest>.jsonl`` under the server's received directory
(``Reservation.bundle_files``). Then it is judged, refusals in this order: 404 ``not_found`` (a
reservation never granted), 411 ``length_required`` (no Content-Length, or chunked), 400
``invalid_request`` (no digest header), 413 ``payload_too_large`` (over the declared size), 400
``invalid_request`` (shorter than its Content-Length), 400 ``payload_digest_mismatch``; then the
model's: the first good upload resolves the reservation ``bundle_accepted`` (answered with
``status``, 200 or 201), a replay of the same bytes gets the same receipt, other bytes 409
``bundle_conflict``, an expired reservation 410, another resolution 409 ``already_resolved``.
"""

import hashlib
import os
import time

from conformance.planes.scan.calls import upload_problems
from conformance.planes.scan.protocol import DIGEST_RE, Refused

__all__ = ["Uploads", "BUNDLE_BLOCK_BYTES", "PACE_BLOCK_BYTES"]

# Bundle bodies are streamed to disk in blocks of this size and hashed on the way.
BUNDLE_BLOCK_BYTES = 1 << 20
# A paced upload (pace) is read in blocks of this size, each when the pace allows it.
PACE_BLOCK_BYTES = 16 * 1024


class Uploads(object):
    """The bundle route of one server. book: the server's Reservations; received_dir: where whole
    uploads are kept; status: the answer to an accepted upload (200, or 201: the upstream takes
    both). pace: (slow bytes, bytes per second): the first slow bytes of every upload body are
    read at that pace (a slow link), the rest at once; None (default): as fast as they come."""

    def __init__(self, lock, book, received_dir, status=200):
        self._lock, self._book = lock, book
        self.received_dir, self.status = received_dir, status
        self.pace = None

    def receive(self, ctx, call):
        """Read an upload's body to a part file, hashing it on the way (paced when pace is set), and
        keep it when it is whole with a good digest header. The server answers it after."""
        req = ctx.request
        call.digest_header = req.headers.get("x-truf-payload-sha256")
        call.problems = upload_problems(call)
        with self._lock:
            res = self._book.granted_one(call.reservation_id)
            if res is not None:
                call.reservation = res
                res.puts.append(call)
        part = os.path.join(self.received_dir, "put-%d.part" % ctx.exchange.seq)
        digest = hashlib.sha256()
        buf = bytearray(BUNDLE_BLOCK_BYTES)
        view = memoryview(buf)
        pace, started, got = self.pace, time.monotonic(), 0
        with open(part, "wb") as out:
            while True:
                if pace is not None and got < pace[0]:
                    # a slow link: never ahead of pace[1] bytes per second over the first pace[0] bytes
                    ahead = started + got / float(pace[1]) - time.monotonic()
                    if ahead > 0:
                        time.sleep(ahead)
                    n = ctx.body.readinto(view[:min(PACE_BLOCK_BYTES, pace[0] - got)])
                else:
                    n = ctx.body.readinto(view)
                if not n:
                    break
                got += n
                digest.update(view[:n])
                out.write(view[:n])
        ctx.body_finished()
        call.body_total, call.body_sha256 = ctx.body.consumed, digest.hexdigest()
        call.complete = not req.chunked and req.content_length == call.body_total
        ctx.note(body_bytes=call.body_total, body_sha256=call.body_sha256)
        self._keep(call, part)

    def _keep(self, call, part):
        """Keep a whole upload whose digest header held (once per reservation and digest)."""
        res = call.reservation
        good = call.complete and call.digest_header == call.body_sha256 and res is not None
        if not good:
            os.unlink(part)
            return None
        with self._lock:
            path = res.bundle_files.get(call.body_sha256)
            if path is None:
                path = os.path.join(self.received_dir, "bundle-%d-%s.jsonl" % (res.reservation_id,
                                                                             call.body_sha256[:16]))
                os.replace(part, path)
                res.bundle_files[call.body_sha256] = path
            else:
                os.unlink(part)
        return path

    def judge(self, call):
        """The route: the answer to an upload received whole (refusals in the order of the module
        docstring); the first good one resolves its reservation."""
        res = self._book.held(call)
        if call.content_length is None or call.chunked:
            raise Refused(411, "length_required", "an upload carries a Content-Length")
        if call.digest_header is None or not DIGEST_RE.match(call.digest_header):
            raise Refused(400, "invalid_request", "an upload carries X-Truf-Payload-SHA256")
        if call.content_length > res.declared_bundle_bytes:
            raise Refused(413, "payload_too_large", "the bundle is larger than declared")
        if not call.complete:
            raise Refused(400, "invalid_request", "the body is shorter than its Content-Length")
        if call.body_sha256 != call.digest_header:
            raise Refused(400, "payload_digest_mismatch", "the bytes do not hash to X-Truf-Payload-SHA256")
        if res.resolution == "bundle_accepted" and res.resolved_by == "bundle":
            if call.body_sha256 != res.payload_sha256:
                raise Refused(409, "bundle_conflict", "another bundle was accepted for this reservation")
            call.replayed = True
            return 200, res.status_doc(), []
        if res.resolution == "expired":
            raise Refused(410, "assignment_expired", "the reservation has expired")
        if res.resolution is not None:
            raise Refused(409, "already_resolved", "the reservation is resolved")
        res.settle("bundle_accepted", "bundle", call.body_sha256)
        res.bundle_path, call.accepted = res.bundle_files.get(call.body_sha256), True
        return self.status, res.status_doc(), []
