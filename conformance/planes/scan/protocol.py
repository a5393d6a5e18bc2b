"""The scan contract's words on the wire, shared by the fake server, the judges and the checks.

    CLAIM_PATH, ASSIGNMENTS_PATH, VERBS     the routes of contract/scan.md; route_of(method, path)
    canonical(doc), parse_strict(data)      canonical JSON and the strict parser (section *Documents*)
    parse_document(data)                    the strict parser with floats (a slot state, D24)
    instant(epoch_s)                        an instant as the server writes it
    error_answer(status, code), Refused     the error shape, as a fault and as a route's refusal
    speak(doc, dialects), DIALECTS          an answer as a real server may write it (area PEER)
    deep_patch(doc, patch), DELETE, KEEP    patches of documents a check breaks on purpose
    token_pieces(token)                     SCAN-SECRET-1: the pieces of a token that count as it

Nothing here holds state: the fake server (server.py) builds on these, and so do the bundle
judge (bundles.py), the verdicts (verdict.py) and the checks.
"""

import collections
import datetime
import json
import re

from conformance import dialect as _dialect
from conformance import faults
from conformance.planes import crawler_docs as _docs

__all__ = ["CLAIM_PATH", "ASSIGNMENTS_PATH", "VERBS", "RESOLUTIONS", "FAILURE_CODES", "NO_WORK_REASONS",
           "TERMINAL_REPORT_MAX_BYTES", "MAX_JSON_INTEGER", "TOKEN_PIECE_CHARS", "REQUEST_ID_RE", "DIGEST_RE",
           "DELETE", "KEEP", "JsonError", "canonical", "parse_strict", "parse_document", "DIALECTS", "speak",
           "dialect_bytes", "instant", "error_body", "error_answer", "deep_patch", "token_pieces", "route_of",
           "Refused"]

# ---------------------------------------------------------------- the contract's numbers and words

CLAIM_PATH = "/api/v1/worker/claim"
ASSIGNMENTS_PATH = "/api/v1/worker/assignments/"
# verb -> (method, path glob of the route; {r} is the reservation id or *)
VERBS = collections.OrderedDict([
    ("claim", ("POST", CLAIM_PATH)),
    ("status", ("GET", ASSIGNMENTS_PATH + "{r}")),
    ("progress", ("POST", ASSIGNMENTS_PATH + "{r}/progress")),
    ("terminal", ("POST", ASSIGNMENTS_PATH + "{r}/terminal")),
    ("bundle", ("PUT", ASSIGNMENTS_PATH + "{r}/bundle")),
])
RESOLUTIONS = ("bundle_accepted", "prebundle_report", "expired")
FAILURE_CODES = ("client_process_failed", "client_storage_failed")
NO_WORK_REASONS = ("empty_queue", "assignment_cap", "dispatch_paused", "capacity", "compatibility")
TERMINAL_REPORT_MAX_BYTES = 16384          # SCAN-TERMINAL-3
MAX_JSON_INTEGER = 9007199254740991
# SCAN-SECRET-1: any piece of the token this long counts as the token.
TOKEN_PIECE_CHARS = 16

REQUEST_ID_RE = re.compile(r"^[a-f0-9]{32}\Z")
DIGEST_RE = re.compile(r"^[a-f0-9]{64}\Z")
_RESERVATION_RE = re.compile(r"^[1-9][0-9]{0,15}\Z")

# Sentinels: DELETE removes a member (patches, overrides); KEEP leaves a setting as it is.
DELETE = object()
KEEP = object()

JsonError = _docs.JsonError


def canonical(value):
    """The scan contract's canonical JSON: sorted keys, no whitespace, ASCII with \\u escapes."""
    return json.dumps(value, ensure_ascii=True, sort_keys=True, separators=(",", ":"),
                      allow_nan=False).encode("ascii")


def parse_strict(data):
    """The contract's strict parser (section *Documents*): raises JsonError and nothing else."""
    return _docs.parse_lenient(data)


def parse_document(data):
    """The strict parser with floats allowed: a slot state keeps the assignment as the server wrote
    it, and a server may write any number as a float (D24)."""
    return _docs.parse_lenient(data, floats=True)


# ---------------------------------------------------------------- peer variety (area PEER)

# Each dialect rewrites every JSON answer the way a real server, whose code nobody here has seen,
# may write it; the upstream reads them all alike (json.loads, .get(), int(), fromisoformat):
#   members         a member nobody defined, in every object at every level (a later release)
#   floats          every whole number written as a float (5 -> 5.0)
#   texts           the whole numbers the upstream reads with int() written as decimal strings
#                   (a generated client's 64-bit integers)
#   instant-offset  every instant in another zone, with microseconds (2026-12-04T15:15:00.250000-05:00)
#   instant-naive   every instant without a zone, in UTC (Python's isoformat() of a naive datetime)
#   instant-space   every instant with a space for its T (str() of an aware datetime)
#   pretty          indented, keys unsorted, non-ASCII characters unescaped
DIALECTS = ("members", "floats", "texts", "instant-offset", "instant-naive", "instant-space", "pretty")
# The members the upstream reads with int() (D25): "texts" writes these as strings.
INT_MEMBERS = frozenset(["reservation_id", "attempts", "declared_bundle_bytes", "target_scan_timeout_seconds",
                         "sequence"])
_SERVED_INSTANT_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z\Z")


def _every_key(doc):
    keys = set()
    if isinstance(doc, dict):
        for key, value in doc.items():
            keys.add(key)
            keys |= _every_key(value)
    elif isinstance(doc, list):
        for item in doc:
            keys |= _every_key(item)
    return keys


def _rewrite_instants(doc, form):
    def visit(node):
        if isinstance(node, dict):
            return dict((key, visit(value)) for key, value in node.items())
        if isinstance(node, list):
            return [visit(item) for item in node]
        if isinstance(node, str) and _SERVED_INSTANT_RE.match(node):
            moment = datetime.datetime.strptime(node, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
            if form == "naive":
                return moment.replace(tzinfo=None).isoformat()
            if form == "space":
                return moment.isoformat(sep=" ")
            return _dialect.instant(moment, "offset-fraction")
        return node
    return visit(doc)


def _as_texts(doc):
    def visit(node):
        if isinstance(node, dict):
            return dict((key, str(value) if key in INT_MEMBERS and isinstance(value, int)
                         and not isinstance(value, bool) else visit(value)) for key, value in node.items())
        if isinstance(node, list):
            return [visit(item) for item in node]
        return node
    return visit(doc)


def speak(doc, dialects):
    """doc (a JSON answer) rewritten in each of dialects, in DIALECTS' order."""
    if "members" in dialects:
        doc = _dialect.unknown_members(doc)
    if "texts" in dialects:
        doc = _as_texts(doc)
    if "floats" in dialects:
        doc = _dialect.floats(doc, _every_key(doc))
    for form in ("offset", "naive", "space"):
        if "instant-" + form in dialects:
            doc = _rewrite_instants(doc, form)
    return doc


def dialect_bytes(doc, dialects):
    """The bytes of an answer: canonical, or (pretty) indented with keys unsorted and UTF-8 unescaped."""
    if "pretty" in dialects:
        return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return canonical(doc)


def instant(epoch_s):
    """An instant as the server writes it: milliseconds and Z."""
    millis = int(round(epoch_s * 1000))
    when = datetime.datetime.fromtimestamp(millis // 1000, datetime.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (millis % 1000)


def error_body(code, message):
    return canonical({"error": {"code": code, "message": message}})


def error_answer(status, code, message="refused by the conformance scan server", retry_after=None, marker=""):
    """A status fault whose body is the contract's error shape: install it with add_fault, e.g.
    ``server.add_fault(error_answer(409, "bundle_conflict"), server.bundle_match(first=1))``.
    retry_after: whole seconds for the Retry-After header (None: no header). marker: text added
    to the message (ScanServer.error_answer adds the server's own)."""
    text = message + (" (%s)" % marker if marker else "")
    return faults.status(status, body=error_body(code, text), retry_after_s=retry_after)


def deep_patch(doc, patch):
    """doc with patch applied: a dict merges member by member (nested dicts too), DELETE removes
    a member; a callable gets the doc and returns the new one (or None: it changed it in place)."""
    if patch is None:
        return doc
    if callable(patch):
        changed = patch(doc)
        return doc if changed is None else changed
    if not isinstance(doc, dict) or not isinstance(patch, dict):
        return patch
    merged = dict(doc)
    for key, value in patch.items():
        if value is DELETE:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_patch(merged[key], value)
        else:
            merged[key] = value
    return merged


def token_pieces(token):
    """The token and every piece of it TOKEN_PIECE_CHARS long (SCAN-SECRET-1)."""
    if len(token) <= TOKEN_PIECE_CHARS:
        return [token]
    return sorted(set(token[i:i + TOKEN_PIECE_CHARS] for i in range(len(token) - TOKEN_PIECE_CHARS + 1)))


# ---------------------------------------------------------------- routes and refusals

def route_of(method, path):
    """(verb, reservation id or None, method_ok) of a request path."""
    if path == CLAIM_PATH:
        return "claim", None, method == "POST"
    if not path.startswith(ASSIGNMENTS_PATH):
        return "other", None, True
    parts = path[len(ASSIGNMENTS_PATH):].split("/")
    if not _RESERVATION_RE.match(parts[0]) or len(parts) > 2:
        return "other", None, True
    rid = int(parts[0])
    if len(parts) == 1:
        return "status", rid, method in ("GET", "HEAD")
    verb = parts[1]
    if verb not in ("progress", "terminal", "bundle"):
        return "other", None, True
    return verb, rid, method == VERBS[verb][0]


class Refused(Exception):
    """A route's refusal: the status, the contract's error code and a message (the server adds
    its marker and answers {"error": {"code", "message"}})."""

    def __init__(self, status, code, message, headers=()):
        Exception.__init__(self, code)
        self.status, self.code, self.message, self.headers = status, code, message, list(headers)
