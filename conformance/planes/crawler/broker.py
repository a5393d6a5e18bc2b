"""The broker fake: ``:redeem`` and ``:fail``, and the bootstrap it serves (CRAWLER-BOOT-*, CRAWLER-FAIL-*).

HTTPS, reached through ``MOSTLYRIGHT_CRAWLER_BOOTSTRAP_URL_BASE``. ``:redeem``
checks the bearer token (minted by the metadata fake for exactly
``<audience base>/<sid>:redeem``, never presented before) and the execution
header; the first valid redemption gets the bootstrap response (built then, so
expiry windows start at the redemption), any later one 409, a bad token 401.
``:fail`` checks its token's audience, records the body and answers 204. The
bootstrap is serialised with plain ``json.dumps`` on purpose: the node must
parse leniently.

Peer variety (CRAWLER-PEER-1): the broker can also serve what the upstream's
real broker may send and the upstream accepts: ``bootstrap_raw`` may name one
of BOOTSTRAP_SPELLINGS (the same document as another JSON writer spells it),
and ``request_members`` adds members nobody defined to the crawl request
("top": the request only; "everywhere": every object in it), which the
capability is then signed for like any request.
"""

import json
import threading
import time

from conformance import dialect
from conformance.faults import Match
from conformance.invariants import Violation
from conformance.planes import crawler_docs as docs
from conformance.planes.crawler.base import (AUDIENCE_BASE, BROKER_PATH, BUCKET, EXECUTION, Fake, read_body,
                                             short)
from conformance.servers import LoopbackServer

__all__ = ["Broker", "BrokerCall", "BOOTSTRAP_SPELLINGS", "REQUEST_MEMBERS", "UNKNOWN_VALUE"]


def _go_style(doc):
    """Go's encoding/json: no spaces, & < > escaped as \\u0026 \\u003c \\u003e (the signed URL has &)."""
    text = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e").encode("utf-8")


def _php_style(doc):
    """PHP's json_encode defaults: no spaces, / escaped as \\/, non-ASCII as \\uXXXX."""
    return json.dumps(doc, separators=(",", ":")).replace("/", "\\/").encode("ascii")


def _reversed_keys(value):
    if isinstance(value, dict):
        return dict((key, _reversed_keys(value[key])) for key in reversed(list(value)))
    if isinstance(value, list):
        return [_reversed_keys(item) for item in value]
    return value


def _indented(doc):
    """Pretty-printed with CRLF line ends and every object's keys in reverse order."""
    return json.dumps(_reversed_keys(doc), indent=2).replace("\n", "\r\n").encode("ascii") + b"\r\n"


# The bootstrap as other JSON writers spell it; each is the same JSON value.
BOOTSTRAP_SPELLINGS = {"go": _go_style, "php": _php_style, "indented": _indented}

# The value request_members adds: every JSON type but a float, since a float
# has no canonical spelling and so no digest (contract/crawler.md, D24).
UNKNOWN_VALUE = {"flag": True, "items": [1, "three", None], "note": "ignore me", "nested": {"depth": 2}}
REQUEST_MEMBERS = {
    "top": lambda request: dialect.unknown_members(request, top_only=True, value=UNKNOWN_VALUE),
    "everywhere": lambda request: dialect.unknown_members(request, value=UNKNOWN_VALUE),
}


class BrokerCall(object):
    """One POST to ``:redeem`` or ``:fail`` (kind), as the broker saw it.

    exchange: the transcript record (headers masked); header(name): a header as
    received (the Authorization value is kept out of repr); token_seq: which
    minted token was presented (None: none, or not one of ours); problems: what
    the broker found wrong, refusal or not; refusal: why it refused (None when
    it did not); body/doc: the request body and its lenient parse (None when not
    JSON); canonical: body is canonical JSON; status: the answer the broker chose
    (a fault may have replaced it: see exchange.status and exchange.fault).
    """

    def __init__(self, kind, exchange, request, body):
        self.kind = kind
        self.exchange = exchange
        self._headers = list(request.headers)
        self.header_names = [name for name, _ in self._headers]
        self.raw_path = request.raw_path
        self.has_query = request.has_query
        self.content_length = request.content_length
        self.chunked = request.chunked
        self.body = body
        self.doc = None
        self.canonical = False
        self.token_seq = None
        self.problems = []
        self.refusal = None
        self.status = None
        if body:
            try:
                self.doc = docs.parse_lenient(body)
                self.canonical = docs.canonical(self.doc) == body
            except docs.JsonError:
                self.doc = None

    def header(self, name):
        name = name.lower()
        for k, v in self._headers:
            if k.lower() == name:
                return v
        return None

    def header_all(self, name):
        name = name.lower()
        return [v for k, v in self._headers if k.lower() == name]

    def __repr__(self):
        return "BrokerCall(%s, token #%s, status=%r, problems=%r)" % (self.kind, self.token_seq, self.status,
                                                                     self.problems)


class _BareRequest(object):
    """Stands in for a request the broker never saw (a request-phase fault)."""
    headers = ()
    raw_path = ""
    has_query = False
    content_length = None
    chunked = False


class Broker(Fake):
    """The broker. It builds the bootstrap from the request options and signs
    the capability with the store it is given (``sign_put`` of
    ``<bucket>/<object_name>``). Options (also plane keywords; each may be set
    as an attribute before the redemption):

    Request:    source_url, attestation (the plane gives both), data_format,
                filename, limits, source_id, requested_at, request_patch(doc),
                request_members (None, or a name of REQUEST_MEMBERS: applied
                after request_patch).
    Capability: url_expires_s (X-Goog-Expires), expires_in_s (expires_at from
                the redemption; default url_expires_s), url_issued_offset_s
                (X-Goog-Date from now), capability_patch(cap).
    Bootstrap:  bootstrap_patch(doc), bootstrap_raw (bytes, callable(doc) ->
                bytes, or a name of BOOTSTRAP_SPELLINGS), redeem_status/redeem_body (answer instead of the
                bootstrap), fail_status/fail_body (the :fail answer).

    A patch returns the new document, or None to keep the one it changed.
    Faults: ``add_fault(fault, redeem_match(**fields))`` or ``fail_match``.
    Observing: redeems(), fails(), redeem_started(), fail_started(); after the
    redemption: request, capability, bootstrap_doc, bootstrap_bytes,
    upload_url, issued_at.
    """

    # The keywords a plane passes through to this fake.
    OPTIONS = ("data_format", "filename", "limits", "source_id", "requested_at", "request_patch", "request_members",
               "url_expires_s",
               "expires_in_s", "url_issued_offset_s", "capability_patch", "bootstrap_patch", "bootstrap_raw",
               "redeem_status", "redeem_body", "fail_status", "fail_body")

    def __init__(self, metadata, store, object_name, source_url, attestation, session_id, seed=0,
                 secret_values=None, cert_chain=None, data_format=None, filename=None, limits=None,
                 source_id=None, requested_at=None, request_patch=None, request_members=None, url_expires_s=900,
                 expires_in_s=None,
                 url_issued_offset_s=0, capability_patch=None, bootstrap_patch=None, bootstrap_raw=None,
                 redeem_status=None, redeem_body=b"", fail_status=204, fail_body=b""):
        Fake.__init__(self, LoopbackServer("broker", tls=True, seed=seed, secret_values=secret_values,
                                           server_header="Google Frontend", cert_chain=cert_chain))
        self.metadata = metadata
        self.store = store
        self.object_name = object_name
        self.session_id = session_id
        self.source_url = source_url
        self.attestation = attestation
        self.request_options = {"data_format": data_format, "filename": filename, "limits": limits,
                                "source_id": source_id, "requested_at": requested_at}
        self.request_patch = request_patch
        if request_members is not None and request_members not in REQUEST_MEMBERS:
            raise ValueError("request_members must be one of %s" % ", ".join(sorted(REQUEST_MEMBERS)))
        self.request_members = request_members
        if isinstance(bootstrap_raw, str) and bootstrap_raw not in BOOTSTRAP_SPELLINGS:
            raise ValueError("bootstrap_raw names no spelling: one of %s" % ", ".join(sorted(BOOTSTRAP_SPELLINGS)))
        self.url_expires_s = url_expires_s
        self.expires_in_s = url_expires_s if expires_in_s is None else expires_in_s
        self.url_issued_offset_s = url_issued_offset_s
        self.capability_patch = capability_patch
        self.bootstrap_patch = bootstrap_patch
        self.bootstrap_raw = bootstrap_raw
        self.redeem_status = redeem_status
        self.redeem_body = redeem_body
        self.fail_status = fail_status
        self.fail_body = fail_body
        self._lock = threading.RLock()
        self._calls = {}             # exchange seq -> BrokerCall
        self._redeemed = False
        self.request = None
        self.capability = None
        self.bootstrap_doc = None
        self.bootstrap_bytes = None
        self.upload_url = None
        self.issued_at = None
        self.server.route("POST", BROKER_PATH + "/*", self._handle, raw=True)

    @staticmethod
    def redeem_match(**fields):
        """The Match of the :redeem route (POST */<sid>:redeem), narrowed by fields."""
        return Match(**dict({"method": "POST", "key": "*:redeem"}, **fields))

    @staticmethod
    def fail_match(**fields):
        """The Match of the :fail route (POST */<sid>:fail), narrowed by fields."""
        return Match(**dict({"method": "POST", "key": "*:fail"}, **fields))

    @property
    def url_base(self):
        """MOSTLYRIGHT_CRAWLER_BOOTSTRAP_URL_BASE."""
        return self.origin + BROKER_PATH

    def audience(self, route="redeem"):
        """The audience a token for route ("redeem" or "fail") must be minted for."""
        return "%s/%s:%s" % (AUDIENCE_BASE, self.session_id, route)

    # ---------------------------------------------------------------- the bootstrap
    def bootstrap(self):
        """Build the bootstrap response now (the broker does it at the first valid
        redemption). Idempotent; returns the raw bytes the broker answers."""
        with self._lock:
            if self.bootstrap_bytes is None:
                self._build_bootstrap()
            return self.bootstrap_bytes

    def _build_bootstrap(self):
        options = dict((k, v) for k, v in self.request_options.items() if v is not None)
        request = docs.make_request(self.source_url, self.attestation, **options)
        if self.request_patch is not None:
            patched = self.request_patch(request)
            request = patched if patched is not None else request
        if self.request_members is not None:
            request = REQUEST_MEMBERS[self.request_members](request)
        # Whole seconds: X-Goog-Date has no fraction, and expires_at must not
        # pass X-Goog-Date + X-Goog-Expires (CRAWLER-CAP-8).
        now = int(time.time())
        self.issued_at = now + self.url_issued_offset_s
        try:
            headers = docs.required_headers(self.session_id, request)
        except Exception:
            # A patched request the helpers cannot digest: sign the unpatched one's headers.
            headers = docs.required_headers(self.session_id, docs.make_request(self.source_url, self.attestation,
                                                                               **options))
        self.upload_url = self.store.sign_put(BUCKET, self.object_name, headers,
                                              expires_in_s=self.url_expires_s, issued_at=self.issued_at)
        capability = docs.make_capability(self.session_id, request, self.upload_url,
                                          expires_at=docs.utc_text(now + self.expires_in_s))
        if self.capability_patch is not None:
            patched = self.capability_patch(capability)
            capability = patched if patched is not None else capability
        doc = {"schema_version": docs.BOOTSTRAP_SCHEMA, "crawler_session_id": self.session_id,
               "request": request, "upload_capability": capability}
        if self.bootstrap_patch is not None:
            patched = self.bootstrap_patch(doc)
            doc = patched if patched is not None else doc
        self.request, self.capability, self.bootstrap_doc = request, capability, doc
        if self.bootstrap_raw is None:
            raw = json.dumps(doc).encode("utf-8")
        elif isinstance(self.bootstrap_raw, str):
            raw = BOOTSTRAP_SPELLINGS[self.bootstrap_raw](doc)
        elif callable(self.bootstrap_raw):
            raw = self.bootstrap_raw(doc)
        else:
            raw = self.bootstrap_raw
        self.bootstrap_bytes = bytes(raw)

    def request_digest(self):
        """Digest of the request the broker served (None before the redemption)."""
        return docs.digest(self.request) if isinstance(self.request, dict) else None

    # ---------------------------------------------------------------- handler
    def _handle(self, ctx):
        req = ctx.request
        body = read_body(ctx)
        name = req.path[len(BROKER_PATH) + 1:]
        kind = None
        if name == self.session_id + ":redeem":
            kind = "redeem"
        elif name == self.session_id + ":fail":
            kind = "fail"
        call = BrokerCall(kind or "other", ctx.exchange, req, body)
        with self._lock:
            self._calls[ctx.exchange.seq] = call
        self._check_token(call, kind)
        if kind == "redeem":
            self._check_redeem_shape(call)
        elif kind == "fail":
            self._check_fail_shape(call)
        ctx.note(kind=call.kind, token_seq=call.token_seq, problems=list(call.problems))
        if ctx.refused:
            call.status = "fault"
            ctx.respond(500)  # replaced by the fault's answer
            return
        json_type = [("Content-Type", "application/json; charset=utf-8")]
        if kind is None:
            call.status = 404
            call.refusal = "no such route"
            ctx.respond(404, json_type, body=b'{"error": {"code": 404, "message": "not found"}}')
            return
        if call.refusal is not None:
            call.status = 401 if call.refusal.startswith("token") else 400
            ctx.respond(call.status, json_type, body=json.dumps(
                {"error": {"code": call.status, "message": call.refusal}}).encode())
            return
        if kind == "fail":
            call.status = self.fail_status
            ctx.respond(self.fail_status, [] if not self.fail_body else json_type, body=self.fail_body)
            return
        with self._lock:
            already = self._redeemed
            self._redeemed = True
        if already:
            call.status = 409
            call.refusal = "bootstrap already redeemed"
            ctx.respond(409, json_type, body=b'{"error": {"code": 409, "message": "already redeemed"}}')
            return
        if self.redeem_status is not None:
            call.status = self.redeem_status
            ctx.respond(self.redeem_status, json_type if self.redeem_body else [], body=self.redeem_body)
            return
        raw = self.bootstrap()
        call.status = 200
        ctx.respond(200, json_type, body=raw)

    def _check_token(self, call, kind):
        auth = call.header_all("authorization")
        token = None
        if len(auth) == 1 and auth[0].startswith("Bearer "):
            token = auth[0][len("Bearer "):]
        minted, fresh = self.metadata.present(token, call.kind, call.exchange.seq)
        if minted is not None:
            call.token_seq = minted.seq
        if not auth:
            call.refusal = "token missing (no Authorization header)"
        elif token is None:
            call.refusal = "token malformed (Authorization is not one 'Bearer <token>')"
        elif minted is None:
            call.refusal = "token unknown (not minted by the metadata server)"
        elif kind is not None and minted.audience != self.audience(kind):
            call.refusal = "token minted for another audience"
        elif not fresh:
            call.refusal = "token presented before (tokens are single-use here)"
        if call.refusal is not None:
            call.problems.append(call.refusal)

    def _check_redeem_shape(self, call):
        execution = call.header_all("x-mostlyright-cloud-run-execution")
        if execution != [EXECUTION]:
            call.problems.append("execution header %s" % ("missing" if not execution else "differs"))
            if call.refusal is None:
                call.refusal = "execution header missing or wrong"
        if call.header("accept") != "application/json":
            call.problems.append("Accept is not application/json")
        if call.body or call.chunked or call.content_length != 0:
            call.problems.append("not an empty body with Content-Length: 0")
        if call.has_query:
            call.problems.append("a query string")

    def _check_fail_shape(self, call):
        if call.header("x-mostlyright-cloud-run-execution") is not None:
            call.problems.append("execution header sent on :fail")
        if call.header("accept") != "application/json":
            call.problems.append("Accept is not application/json")
        if call.header("content-type") != "application/json":
            call.problems.append("Content-Type is not application/json")
        if not call.canonical:
            call.problems.append("body is not canonical JSON")
        elif not (isinstance(call.doc, dict) and list(call.doc) == ["failure_code"]):
            call.problems.append("body is not exactly {\"failure_code\": ...}")

    # ---------------------------------------------------------------- observe
    def _calls_to(self, suffix):
        out = []
        for ex in self.transcript:
            if not ex.path.endswith(suffix):
                continue
            with self._lock:
                call = self._calls.get(ex.seq)
            if call is None:
                # A request-phase fault answered before the broker saw it.
                call = BrokerCall(suffix[1:], ex, _BareRequest(), b"")
                call.status = "fault"
            out.append(call)
        return out

    def redeems(self):
        """Every POST to <sid>:redeem (BrokerCall), in arrival order."""
        return self._calls_to(":redeem")

    def fails(self):
        """Every POST to <sid>:fail (BrokerCall; .doc is the parsed body)."""
        return self._calls_to(":fail")

    def redeem_started(self):
        """Predicate for plane.stop_when: a :redeem request has arrived."""
        return lambda: any(ex.path.endswith(":redeem") for ex in self.transcript)

    def fail_started(self):
        """Predicate for plane.stop_when: a :fail request has arrived."""
        return lambda: any(ex.path.endswith(":fail") for ex in self.transcript)

    # ---------------------------------------------------------------- secrets and invariants
    def secrets(self):
        """The capability URL and its signed query, and the raw bootstrap response."""
        with self._lock:
            upload_url, bootstrap = self.upload_url, self.bootstrap_bytes
        values = []
        if upload_url:
            values += [upload_url, upload_url.split("?", 1)[-1]]
        if bootstrap:
            values.append(bootstrap.decode("utf-8", "replace"))
        return values

    def describe_secret(self, secret):
        """A name for secret when it is one of this fake's, else None."""
        with self._lock:
            if self.upload_url and secret == self.upload_url:
                return "the signed upload URL"
            if self.upload_url and secret == self.upload_url.split("?", 1)[-1]:
                return "the signed upload URL's query"
            if self.bootstrap_bytes and secret == self.bootstrap_bytes.decode("utf-8", "replace"):
                return "the raw bootstrap response"
        return None

    def invariants(self):
        """At most one :redeem and one :fail; the :fail code one of the three."""
        found = []
        redeems, fails = self.redeems(), self.fails()
        if len(redeems) > 1:
            found.append(Violation("CRAWLER-BOOT-2: one redemption, never retried", "at most one :redeem POST",
                                   "%d :redeem POSTs" % len(redeems)))
        if len(fails) > 1:
            found.append(Violation("CRAWLER-FAIL-2: one :fail report, never retried", "at most one :fail POST",
                                   "%d :fail POSTs" % len(fails)))
        for call in fails:
            code = self.fail_code(call)
            if code is not None and code not in docs.FAIL_ROUTE_CODES:
                found.append(Violation("CRAWLER-FAIL-1: only three codes on :fail",
                                       "failure_code one of %s" % ", ".join(sorted(docs.FAIL_ROUTE_CODES)),
                                       "failure_code %s" % short(code)))
        return found

    @staticmethod
    def fail_code(call):
        """The failure_code a :fail call carried (None when its body has none)."""
        return call.doc.get("failure_code") if isinstance(call.doc, dict) else None
