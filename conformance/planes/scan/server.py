"""The fake scan server of the scan contract: claim, status, progress, terminal report, bundle.

One HTTPS LoopbackServer (the test CA) that serves, at the paths of contract/scan.md:

    POST /api/v1/worker/claim                                   SCAN-CLAIM-*
    GET  /api/v1/worker/assignments/{reservation_id}            SCAN-RECONCILE-1
    POST /api/v1/worker/assignments/{reservation_id}/progress   SCAN-PROGRESS-2
    POST /api/v1/worker/assignments/{reservation_id}/terminal   SCAN-TERMINAL-*
    PUT  /api/v1/worker/assignments/{reservation_id}/bundle     SCAN-UPLOAD-*

    server = ScanServer(token_check, received_dir)
    res = server.add_reservation(targets, ...)          # queued: the next new request id gets it
    server.add_fault(faults.status(503), server.claim_match(first=1))
    server.add_fault(error_answer(409, "bundle_conflict"), server.bundle_match(res))
    server.resolve(res, "expired")                      # the server decides, racing the worker
    ... server.calls("claim"), res.puts, res.terminals, server.progress_events() ...

The model. A reservation waits in a queue until a claim with a request id the server has not
seen takes it (201 with the assignment, built then, so its instants start at the grant); a known
request id gets the same assignment again (201) while its reservation is unresolved, and
``{"resolution": R}`` (200) once it is; a new request id with the queue empty gets 204 with
``Retry-After``. A reservation resolves once: ``bundle_accepted`` at the first whole upload whose
bytes hash to its ``X-Truf-Payload-SHA256``, ``prebundle_report`` at the first terminal report,
or whatever a check decides (resolve, set_status). Replays of the same bytes get the same
receipt; other bytes are refused (409 ``bundle_conflict``, ``terminal_conflict``). Every answer
the worker reads is canonical JSON (ensure_ascii) unless the server's ``dialect`` rewrites it as a
real server may write it (DIALECTS, area PEER); every error is ``{"error": {"code", "message"}}``
and every message carries ``marker`` (SCAN-SECRET-2: no output may repeat it).

Refusals, in the order they are checked: 404 ``not_found`` (no route, or a reservation this
server never granted), 401 ``unauthorized`` (no ``Bearer`` token the plane accepts now), 405
``method_not_allowed``, 400 ``invalid_request`` (a claim or progress body that is not a strict
JSON object of its shape; an upload without a digest header), 411 ``length_required`` (a chunked
upload), 413 ``payload_too_large`` (a report over 16384 bytes, a bundle over its declared size),
400 ``payload_digest_mismatch``, then the model's own (409, 410). Every request is recorded as a
ScanCall (what arrived, what was answered; no secret kept but in ``body`` as sent) in arrival
order, and its exchange's notes carry the verb, the reservation and, for a bundle, the length
and SHA-256 of the bytes received (streamed: a bundle is never held in memory, only on disk).

Faults enter one way, ``add_fault(fault, match)`` with a route helper (claim_match,
status_match, progress_match, terminal_match, bundle_match); a refusing fault changes nothing
(a claim it answers grants nothing, an upload is not accepted). ``script(verb, ...)`` replaces
an answer with any status, headers and body (malformed 201s, receipts that do not bind),
before or after the server acted.

The server is this module's ScanServer (the handler, the claim, status, progress and terminal
routes, what it observed) and a part per module:

    protocol.py      the routes, canonical JSON, the error shape, dialects: the words every part speaks
    calls.py         ScanCall (one request as received and answered) and the form problems it records
    reservations.py  Reservation and the book (server.book): queue, grants, resolutions, no-work answers
    scripts.py       the scripted answers (server.scripts; script())
    upload.py        the upload route (server.uploads): streamed to disk, hashed, kept, judged
"""

import hashlib
import os
import secrets as _secrets
import threading
import time

from conformance.fake import Fake, read_body
from conformance.faults import Match
from conformance.planes.scan.calls import (MAX_RECORDED_BODY_BYTES, ScanCall, build_values, capabilities_ok,
                                           claim_problems, report_problems)
from conformance.planes.scan.protocol import (ASSIGNMENTS_PATH, DIALECTS, FAILURE_CODES, KEEP, REQUEST_ID_RE,
                                              TERMINAL_REPORT_MAX_BYTES, VERBS, Refused, dialect_bytes, error_answer,
                                              instant, route_of, speak, token_pieces)
from conformance.planes.scan.reservations import Reservations
from conformance.planes.scan.scripts import Scripts
from conformance.planes.scan.upload import Uploads
from conformance.servers import LoopbackServer

__all__ = ["ScanServer"]

# A token shorter than this is not looked for (it would match by accident).
MIN_SECRET_CHARS = 16


class ScanServer(Fake):
    """The scan server of one plane: its routes, the records of every request, and its parts.

    token_check(token) -> the token's index in the plane's history when the plane accepts it
    now, else None. received_dir: where whole uploads are kept (one file per reservation and
    digest). Options (also the plane's keywords; attributes after): retry_after (the 204's
    Retry-After, an int or any text; None: no header), no_work_reason (None: no
    X-Truf-No-Work-Reason), progress_stale_when_resolved (a progress event for a resolved
    reservation is answered 410 progress_stale, which the worker counts as delivered),
    first_reservation_id (1), dialect (DIALECTS), upload_status (uploads.status).

    Its parts: ``book`` (Reservations: the queue, the grants, the resolutions), ``scripts``
    (Scripts: answers of a check's choosing), ``uploads`` (Uploads: the bundle route;
    ``uploads.pace`` reads upload bodies as a slow link would).
    """

    OPTIONS = ("retry_after", "no_work_reason", "progress_stale_when_resolved", "first_reservation_id", "dialect",
               "upload_status")

    def __init__(self, token_check, received_dir, seed=0, secret_values=None, cert_chain=None, retry_after=1,
                 no_work_reason=None, progress_stale_when_resolved=True, first_reservation_id=1, dialect=(),
                 upload_status=200):
        self.token_check = token_check
        os.makedirs(received_dir, exist_ok=True)
        self.retry_after, self.no_work_reason = retry_after, no_work_reason
        self.progress_stale_when_resolved = progress_stale_when_resolved
        # Peer variety (area PEER): rewrites of every JSON answer the upstream reads leniently
        # (see DIALECTS), and the status of an accepted upload (200 or 201: the upstream takes both).
        unknown = sorted(set(dialect) - set(DIALECTS))
        if unknown:
            raise ValueError("ScanServer: unknown dialect(s) %s (known: %s)"
                             % (", ".join(unknown), ", ".join(DIALECTS)))
        self.dialect = tuple(dialect)
        # SCAN-SECRET-2: every error message carries it; no output of the worker may.
        self.marker = "MARKER" + _secrets.token_hex(8)
        self._lock = threading.RLock()
        self.book = Reservations(self._lock, first_reservation_id)
        self.scripts = Scripts(self._lock)
        self.uploads = Uploads(self._lock, self.book, received_dir, upload_status)
        self._records = {}                               # exchange seq -> ScanCall
        self._progress_log = []                          # (ScanCall, doc, replayed)
        self._progress_seen = set()                      # (reservation id, sequence)
        self._secret_values = secret_values or (lambda: ())
        Fake.__init__(self, LoopbackServer("scan", tls=True, seed=seed, secret_values=self._secret_values,
                                           cert_chain=cert_chain))
        self._routes = {"claim": self._claim, "status": self._status, "progress": self._progress,
                        "terminal": self._terminal, "bundle": self.uploads.judge}
        self.server.route("*", "/*", self._handle, raw=True)

    @property
    def name(self):
        """The server's name: a Timeline and the lifecycle triggers take this fake as it is."""
        return self.server.name

    # ---------------------------------------------------------------- route matches (for add_fault)
    @staticmethod
    def path_of(verb, reservation=None):
        """(method, path glob) of a verb's route, for one reservation (a Reservation or an id) or any."""
        method, template = VERBS[verb]
        return method, template.format(r="*" if reservation is None else int(reservation))

    def _match(self, verb, reservation, options):
        method, glob = self.path_of(verb, reservation)
        if verb == "status":  # * crosses /: leave the mutation routes out
            options.setdefault("not_key", [ASSIGNMENTS_PATH + "*/*"])
        return Match(method=method, key=glob, **options)

    def claim_match(self, **options):
        """Match of the claims (Match's keywords: first, skip, phase, probability, seed)."""
        return self._match("claim", None, options)

    def status_match(self, reservation=None, **options):
        return self._match("status", reservation, options)

    def progress_match(self, reservation=None, **options):
        return self._match("progress", reservation, options)

    def terminal_match(self, reservation=None, **options):
        return self._match("terminal", reservation, options)

    def bundle_match(self, reservation=None, **options):
        return self._match("bundle", reservation, options)

    def error_answer(self, status, code, message="refused by the conformance scan server", retry_after=None):
        """error_answer() with this server's marker in the message."""
        return error_answer(status, code, message, retry_after, self.marker)

    # ---------------------------------------------------------------- arranging (the book: reservations.py)
    def add_reservation(self, targets, declared_bundle_bytes=1 << 20, target_scan_timeout_s=30,
                        assignment_deadline_in_s=120.0, patch=None, queued=True, **identity):
        """A new Reservation, queued for the next new request id unless queued is False
        (Reservations.add). identity: source, platform, planning_kind, attempts."""
        return self.book.add(targets, declared_bundle_bytes, target_scan_timeout_s, assignment_deadline_in_s, patch,
                             queued, **identity)

    def grant(self, reservation, request_id=None):
        """(request id, assignment) of a reservation bound without a claim (Reservations.grant)."""
        return self.book.grant(reservation, request_id)

    def reservation(self, reservation):
        """The Reservation of an id (or the Reservation itself)."""
        return self.book.get(reservation)

    def reservations(self):
        return self.book.all()

    def queued(self):
        return self.book.queued()

    def resolve(self, reservation, resolution="expired", payload_sha256=None, failure_code=None, state=None):
        """The server resolves a reservation on its own, racing the worker (Reservations.resolve)."""
        return self.book.resolve(reservation, resolution, payload_sha256, failure_code, state)

    def set_status(self, reservation, **changes):
        """What the server says of a reservation from now on (Reservations.set_status: state,
        resolution, status_error, clear_overrides, status members)."""
        return self.book.set_status(reservation, **changes)

    def set_no_work(self, retry_after=KEEP, reason=KEEP):
        """The 204 from now on: Retry-After (int or any text; None: absent), X-Truf-No-Work-Reason."""
        with self._lock:
            if retry_after is not KEEP:
                self.retry_after = retry_after
            if reason is not KEEP:
                self.no_work_reason = reason

    def script(self, verb, status=None, body=None, headers=(), reservation=None, nth=1, first=1, commit=False):
        """Replace the answer of the nth request of verb (counted from now; reservation: of that
        one only) and the `first - 1` after it (first=None: every one from the nth on).

        status: the status (None: the server's own); body: bytes, a JSON value (sent compact),
        None for no body, or a callable(call, status, doc) -> body or (status, body); headers:
        the answer's headers (default: the server's own when the status is unchanged, else
        none). commit=False: the server does nothing with the request (a claim grants nothing,
        an upload is not accepted); True: it acts, then the scripted answer goes out instead of
        its own (a receipt that does not bind). When two scripts apply to one request, the one
        installed first answers."""
        return self.scripts.add(verb, status, body, headers, reservation, nth, first, commit)

    def script_claim_answer(self, nth, status, body=None, headers=()):
        """The nth claim from now gets exactly this answer and grants nothing (malformed 200,
        201 or 204 answers)."""
        return self.script("claim", status, body, headers, nth=nth, first=1, commit=False)

    # ---------------------------------------------------------------- handler
    def _handle(self, ctx):
        req = ctx.request
        verb, rid, method_ok = route_of(req.method, req.path)
        call = ScanCall(verb, ctx.exchange, rid)
        call.content_length, call.chunked = req.content_length, req.chunked
        call.secret_places = self._secret_places(req)
        auth = req.headers.get_all("authorization")
        token = auth[0][7:] if len(auth) == 1 and auth[0].startswith("Bearer ") and auth[0][7:] else None
        call.auth = "missing" if not auth else "malformed" if token is None else "refused"
        if token is not None:
            call.token_index = self.token_check(token)
            if call.token_index is not None:
                call.auth = "ok"
        with self._lock:
            self._records[ctx.exchange.seq] = call
        ctx.note(verb=verb, reservation=rid)
        if verb == "bundle" and method_ok and call.auth == "ok":
            self.uploads.receive(ctx, call)  # streamed to disk and hashed, never held in memory
        else:
            body = read_body(ctx, MAX_RECORDED_BODY_BYTES)
            call.parse(body, ctx.body.consumed)
            call.secret_places += self._body_secrets(body)
        if ctx.refused:
            call.status = "fault"
            ctx.respond(500)  # replaced by the fault's answer: the server did nothing
            return
        try:
            if verb == "other":
                raise Refused(404, "not_found", "no such route")
            if call.auth != "ok":
                raise Refused(401, "unauthorized", "the bearer token is not accepted")
            if not method_ok:
                raise Refused(405, "method_not_allowed", "this path takes another method")
            answer = self._answer(call)
        except Refused as refused:
            answer = self._refusal(call, refused)
        self._send(ctx, call, answer)

    def _answer(self, call):
        """(status, doc or None, headers) of a call that passed the common checks, scripted or not."""
        return self.scripts.answer(call, self._act)

    def _act(self, call):
        """The model's own answer to a call: its route's, or the route's refusal."""
        try:
            return self._routes[call.verb](call)
        except Refused as refused:
            return self._refusal(call, refused)

    def _refusal(self, call, refused):
        call.code = refused.code
        message = "%s (%s)" % (refused.message, self.marker)
        return refused.status, {"error": {"code": refused.code, "message": message}}, refused.headers

    def _send(self, ctx, call, answer):
        status, doc, headers = answer
        if call.status is None:
            call.status = status
        if isinstance(doc, (bytes, bytearray)):
            body = bytes(doc)
        else:
            if doc is not None and self.dialect:
                doc = speak(doc, self.dialect)
            call.answer = doc
            body = dialect_bytes(doc, self.dialect) if doc is not None else b""
        names = set(k.lower() for k, _v in headers)
        head = list(headers)
        if body and "content-type" not in names:
            head.append(("Content-Type", "application/json"))
        ctx.respond(status, head + [("Cache-Control", "no-store")], body=body, error_code=call.code)

    def _secret_places(self, req):
        """Where a token (or a piece of one) came outside the Authorization header."""
        found = []
        for secret in self._pieces():
            if secret in req.target:
                found.append("the request target")
            for name, value in req.headers:
                if name.lower() != "authorization" and secret in value:
                    found.append("the %s header" % name)
        return sorted(set(found))

    def _body_secrets(self, body):
        return ["the body"] if body and any(p.encode("ascii", "replace") in body for p in self._pieces()) else []

    def _pieces(self):
        values = []
        for secret in self._secret_values():
            if isinstance(secret, str) and len(secret) >= MIN_SECRET_CHARS:
                values += token_pieces(secret)
        return values

    # ---------------------------------------------------------------- the routes (under the lock)
    def _claim(self, call):
        doc = call.doc
        if not isinstance(doc, dict) or not isinstance(doc.get("request_id"), str) \
                or not REQUEST_ID_RE.match(doc["request_id"]):
            raise Refused(400, "invalid_request", "a claim carries a request_id of 32 lowercase hex digits")
        call.problems = claim_problems(call)
        request_id = call.request_id = doc["request_id"]
        offered = build_values(doc.get("build"), "$capabilities")
        if offered and capabilities_ok(offered[0]):
            self.book.capability = tuple(offered[0][0])  # what the next grant's assignment asks for (the first)
        res, call.replayed = self.book.claim(request_id)
        if res is not None:
            call.reservation = res
            if call.replayed and res.resolution is not None:
                return 200, {"resolution": res.status_doc()}, []
            return 201, {"assignment": res.doc}, []
        headers = []
        if self.retry_after is not None:
            headers.append(("Retry-After", str(self.retry_after)))
        if self.no_work_reason is not None:
            headers.append(("X-Truf-No-Work-Reason", str(self.no_work_reason)))
        return 204, None, headers

    def _status(self, call):
        res = self.book.held(call)
        if call.body_total:
            call.problems.append("a body on a status read")
        if res.status_error is not None:
            status, code = res.status_error
            raise Refused(status, code, "the reservation is not available")
        return 200, res.status_doc(), []

    def _progress(self, call):
        res = self.book.held(call)
        doc = call.doc
        if not isinstance(doc, dict) or isinstance(doc.get("sequence"), bool) \
                or not isinstance(doc.get("sequence"), int) or doc.get("reservation_id") != res.reservation_id:
            raise Refused(400, "invalid_request", "a progress event names its sequence and this reservation")
        if not call.canonical:
            call.problems.append("not canonical JSON")
        if res.resolution is not None and self.progress_stale_when_resolved:
            self._progress_log.append((call, doc, None))
            raise Refused(410, "progress_stale", "the reservation is resolved")
        key = (res.reservation_id, doc["sequence"])
        call.replayed = key in self._progress_seen
        self._progress_seen.add(key)
        self._progress_log.append((call, doc, call.replayed))
        return 200, {"accepted": True, "reservation_id": res.reservation_id, "sequence": doc["sequence"],
                     "received_at": instant(time.time()), "replayed": call.replayed}, []

    def _terminal(self, call):
        res = self.book.held(call)
        res.terminals.append(call)
        if call.body_total > TERMINAL_REPORT_MAX_BYTES:
            raise Refused(413, "payload_too_large", "a terminal report is at most %d bytes"
                           % TERMINAL_REPORT_MAX_BYTES)
        doc = call.doc
        call.problems = report_problems(call)
        if not isinstance(doc, dict) or doc.get("failure_code") not in FAILURE_CODES \
                or not isinstance(doc.get("detail"), str):
            raise Refused(400, "invalid_request", "a report carries a known failure_code and a detail")
        if res.resolution == "prebundle_report" and res.resolved_by == "terminal":
            if call.body != res.terminal_body:
                raise Refused(409, "terminal_conflict", "another report was accepted for this reservation")
            call.replayed = True
            return 200, res.status_doc(), []
        if res.resolution == "expired":
            raise Refused(410, "assignment_expired", "the reservation has expired")
        if res.resolution is not None:
            raise Refused(409, "already_resolved", "the reservation is resolved")
        res.settle("prebundle_report", "terminal", hashlib.sha256(call.body).hexdigest(), doc["failure_code"])
        res.terminal_body, call.accepted = call.body, True
        return 200, res.status_doc(), []

    # ---------------------------------------------------------------- observe (safe while the node runs)
    def calls(self, verb=None, reservation=None, since=None):
        """Every request (ScanCall) in arrival order; verb, reservation, since (monotonic) filter.
        A request a request-phase fault answered before the handler ran has status "fault" and only
        what the transcript shows; one still being read has status None."""
        transcript = self.transcript
        found = []
        with self._lock:
            for ex in transcript:
                call = self._records.get(ex.seq)
                if call is None:
                    verb_of, rid, _ok = route_of(ex.method, ex.path.split("?", 1)[0])
                    call = ScanCall(verb_of, ex, rid)
                    call.status = "fault" if ex.fault is not None else None
                if verb is not None and call.verb != verb:
                    continue
                if reservation is not None and call.reservation_id != int(reservation):
                    continue
                if since is not None and call.t < since:
                    continue
                found.append(call)
        return found

    def claims(self, since=None):
        return self.calls("claim", since=since)

    def progress_events(self):
        """(ScanCall, event doc, replayed) of every progress event that passed the shape check,
        in arrival order (replayed None: answered 410 progress_stale)."""
        with self._lock:
            return list(self._progress_log)

    def no_work_request_ids(self):
        """Request ids answered 204, in order."""
        return self.book.no_work_request_ids()

    def granted(self):
        """{request id: reservation id} of every grant."""
        return self.book.granted()
