"""What the fake scan server records of each request: a ScanCall, and what is off in its form.

    call = ScanCall(verb, exchange, reservation_id)     # made by the server as a request arrives
    call.parse(body, total)                             # a JSON route's body: doc, canonical, json_error
    call.problems = claim_problems(call)                # SCAN-CLAIM-2 and SCAN-HTTP-2 as one claim shows
                                                        # them (report_problems, upload_problems alike)

A ScanCall holds what arrived and what was answered, no secret but in ``body`` as sent. The form
problems are recorded on the call (``call.problems``), never answered: the checks judge them.
``build_values`` reads what a claim's build carries where the deployed CLAIM_BUILD (D30) holds
a placeholder.
"""

from conformance.planes.scan import deploy as _deploy
from conformance.planes.scan.protocol import DIGEST_RE, JsonError, canonical, parse_strict
from conformance.servers import MASK

__all__ = ["ScanCall", "MAX_RECORDED_BODY_BYTES", "claim_problems", "capabilities_ok", "build_values",
           "report_problems", "upload_problems"]


# JSON bodies (claims, progress, reports) are small documents; a larger body is counted and
# its first part kept, never buffered whole.
MAX_RECORDED_BODY_BYTES = 64 * 1024


class ScanCall(object):
    """One request the server received, in arrival order.

    verb ("claim", "status", "progress", "terminal", "bundle", "other"), method, path,
    reservation_id (from the path; None for a claim), t (arrival, time.monotonic()), exchange
    (the transcript record), headers (as received, Authorization masked), body (JSON routes: the
    first MAX_RECORDED_BODY_BYTES as sent; bundles: b""), body_total (bytes received),
    body_sha256 (a bundle's bytes as received), complete (a bundle: Content-Length bytes all
    received), content_length, digest_header (X-Truf-Payload-SHA256), doc (the strict parse, or
    None) and json_error, canonical, auth ("ok", "missing", "malformed", "refused"),
    token_index (which token of the plane's history it carried: 0 the first, None if none),
    request_id (a claim's), reservation (the Reservation it concerned or was granted), status
    (the answer's status, "fault" when a fault answered), code (an error answer's code), answer
    (the document answered), replayed (an idempotent replay), accepted (this upload or report
    is the one that resolved its reservation), scripted (a script replaced the answer),
    problems (what is off in the request's form: the checks judge them), secret_places
    ([where]: a token or a piece of one outside the Authorization header)."""

    def __init__(self, verb, exchange, reservation_id=None):
        self.verb, self.exchange, self.reservation_id = verb, exchange, reservation_id
        self.method, self.path = exchange.method, exchange.path
        self.t = exchange.t_start
        self.headers = list(exchange.headers)
        self.body, self.body_total, self.body_sha256, self.complete = b"", 0, None, False
        self.content_length = self.digest_header = None
        self.chunked = False
        self.doc, self.json_error, self.canonical = None, None, False
        self.auth = self.token_index = self.request_id = self.reservation = None
        self.status = self.code = self.answer = None
        self.replayed = self.accepted = self.scripted = False
        self.problems, self.secret_places = [], []

    def parse(self, body, total):
        self.body, self.body_total = body, total
        if body and len(body) == total:
            try:
                self.doc = parse_strict(body)
                self.canonical = canonical(self.doc) == body
            except (JsonError, ValueError, TypeError) as exc:
                self.json_error = str(exc)
        elif body:
            self.json_error = "body larger than %d bytes" % MAX_RECORDED_BODY_BYTES

    def header(self, name):
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    @property
    def header_names(self):
        return [k for k, _v in self.headers]

    def __repr__(self):
        return "ScanCall(%s %s, status=%r, code=%r)" % (self.verb, self.path, self.status, self.code)


# ---------------------------------------------------------------- form problems (recorded, judged by checks)

def claim_problems(call):
    """SCAN-CLAIM-2 and SCAN-HTTP-2 as far as one claim shows them."""
    found = _json_headers(call)
    doc = call.doc
    if sorted(doc) != ["build", "request_id"]:
        found.append("members are not exactly build and request_id")
    # SCAN-CLAIM-2, D30: the build is the CLAIM_BUILD in force, its placeholders filled
    found += _deploy.build_problems(doc.get("build"), capabilities_ok, lambda value: isinstance(value, str)
                                    and DIGEST_RE.match(value) is not None)
    return found


def capabilities_ok(value):
    """A build's capabilities: a non-empty list of [source, platform, planning_kind], each 1..64 characters."""
    return isinstance(value, list) and bool(value) and all(
        isinstance(c, list) and len(c) == 3 and all(isinstance(s, str) and 1 <= len(s) <= 64 for s in c)
        for c in value)


def build_values(build, placeholder):
    """The values a claim's build carries where CLAIM_BUILD holds the placeholder (e.g. "$capabilities")."""
    found = []

    def walk(template, value):
        if template == placeholder:
            found.append(value)
        elif isinstance(template, dict) and isinstance(value, dict):
            for key in template:
                walk(template[key], value.get(key))
        elif isinstance(template, list) and isinstance(value, list):
            for item, got in zip(template, value):
                walk(item, got)
    walk(_deploy.CLAIM_BUILD, build)
    return found


def report_problems(call):
    """SCAN-TERMINAL-1 and SCAN-HTTP-2 as far as one report shows them."""
    found = _json_headers(call)
    doc = call.doc
    if not isinstance(doc, dict):
        return found + ["not a JSON object (%s)" % (call.json_error or "no body")]
    extra = set(doc) - {"failure_code", "detail", "diagnostics"}
    if extra or "failure_code" not in doc or "detail" not in doc:
        found.append("members are not failure_code, detail and optionally diagnostics")
    if "diagnostics" in doc and not isinstance(doc["diagnostics"], list):
        found.append("diagnostics is not a list")
    return found


def upload_problems(call):
    """SCAN-UPLOAD-1: exactly its headers."""
    names = sorted(name.lower() for name in call.header_names)
    wanted = ["accept-encoding", "authorization", "content-length", "content-type", "host",
              "x-truf-payload-sha256"]
    found = [] if names == wanted else ["headers are %s, not exactly %s" % (", ".join(names), ", ".join(wanted))]
    if call.header("content-type") != "application/octet-stream":
        found.append("Content-Type is not application/octet-stream")
    return found


def _json_headers(call):
    found = []
    if not call.canonical:
        found.append("not canonical JSON" if call.doc is not None else "not strict JSON")
    names = sorted(name.lower() for name in call.header_names)
    wanted = ["accept-encoding", "authorization", "content-length", "content-type", "host"]
    if names != wanted:
        found.append("headers are %s, not exactly %s" % (", ".join(names), ", ".join(wanted)))
    if call.header("content-type") != "application/json":
        found.append("Content-Type is not application/json")
    if MASK in call.path:
        found.append("a query string")
    return found
