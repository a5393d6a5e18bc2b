"""Judging a scan run across the plane: what must hold after every check (ScanPlane.invariants).

    unsafe_lines(stdout)                        # SCAN-OUTPUT-1: lines that are not safe lines
    slot_file_problems(name, raw)               # SCAN-STATE-2, -3: a slot file or stale record as left
    token_hits(tokens, texts)                   # SCAN-SECRET-1: a token, or a 16-character piece of one
    server_violations(server)                   # what the scan server's records show

The plane calls these from invariants(); a check may call any of them on what it holds.
"""

import collections
import os
import re

from conformance.invariants import Violation, read_for_scan
from conformance.planes.scan.protocol import JsonError, canonical, parse_document, token_pieces

__all__ = ["SAFE_LINE", "unsafe_lines", "slot_file_problems", "token_hits", "server_violations", "PHASES",
           "SLOT_FILE_RE", "STALE_FILE_RE", "TRACEBACK"]

# SCAN-OUTPUT-1: every line the worker may print on stdout.
SAFE_LINE = re.compile(
    r"^(?:worker: (?:started with [0-9]+ slots|draining|stopping|token file rejected, keeping the current token"
    r"|another worker holds this state directory|start-up failed)"
    r"|worker slot [0-9]+: (?:worker API request failed \(HTTP [0-9]{3}\)|worker network operation failed"
    r"|worker protocol or state validation failed|local I/O operation failed|worker operation failed"
    r"|containment authority remains pending"
    r"|reservation [0-9]+ resolved \((?:bundle_accepted|prebundle_report|expired)\)"
    r"|reservation [0-9]+ discarded as stale"
    r"|reservation [0-9]+ reported \((?:client_process_failed|client_storage_failed)\)"
    r"|reservation [0-9]+ is past its deadline; waiting for the server"
    r"|retired \([a-z0-9_]+\)))\Z")
TRACEBACK = "Traceback (most recent call last)"
# SCAN-STATE-3: the phases and their members (required, optional).
ASSIGNED = ("assignment", "phase", "retained_work", "runner", "schema")
PHASES = {
    "claiming": (("phase", "request_id", "schema"), ()),
    "assigned": (ASSIGNED, ()),
    "bundle_ready": (ASSIGNED + ("bundle",), ("transport_conflict",)),
    "terminal_pending": (ASSIGNED + ("terminal",), ("bundle", "transport_conflict")),
    "awaiting_resolution": (ASSIGNED + ("stale",), ("bundle", "terminal", "transport_conflict")),
}
STALE_KEYS = ("bundle_id", "code", "outcome", "recorded_at", "reservation_id", "scan_event_id", "schema",
              "status_code")
SLOT_FILE_RE = re.compile(r"^slot-(0|[1-9][0-9]{0,5})\.json\Z")
STALE_FILE_RE = re.compile(r"^slot-(0|[1-9][0-9]{0,5})-stale\.json\Z")


def unsafe_lines(text):
    """The lines of text (a run's stdout) that are not safe lines, in order."""
    lines = (text or "").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line for line in lines if not SAFE_LINE.match(line)]


def slot_file_problems(name, raw):
    """What is wrong with a slot file (slot-N.json) or stale record (slot-N-stale.json) as a
    worker left it: strict JSON, canonical, the schema and the phase's members."""
    try:
        doc = parse_document(raw)  # the assignment is kept as the server wrote it, floats included (D24)
    except JsonError as exc:
        return ["not strict JSON (%s)" % exc]
    if not isinstance(doc, dict):
        return ["not a JSON object"]
    found = [] if canonical(doc) == raw else ["not canonical JSON"]
    if STALE_FILE_RE.match(name):
        if sorted(doc) != list(STALE_KEYS) or doc.get("schema") != 1 or doc.get("outcome") != "discarded_stale":
            found.append("not exactly the stale record (schema 1, outcome discarded_stale, its six members)")
        return found
    if doc.get("schema") != 2 or isinstance(doc.get("schema"), bool):
        return found + ["schema is %r, not 2" % (doc.get("schema"),)]
    phase = doc.get("phase")
    if phase not in PHASES:
        return found + ["phase %r is not one of %s" % (phase, ", ".join(PHASES))]
    required, optional = PHASES[phase]
    missing = sorted(set(required) - set(doc))
    extra = sorted(set(doc) - set(required) - set(optional))
    if missing or extra:
        found.append("phase %s: %s%s" % (phase, "missing %s" % ", ".join(missing) if missing else "",
                                         ("; " if missing and extra else "") + ("extra %s" % ", ".join(extra)
                                                                                if extra else "")))
    return found


def token_hits(tokens, texts):
    """[(label, token, whole)] for every token found in texts ({label: str or bytes}); whole is
    False when only a TOKEN_PIECE_CHARS-long piece of it is there. One hit per label and token."""
    found = []
    for label, blob in texts.items():
        if blob is None:
            continue
        data = blob if isinstance(blob, (bytes, bytearray)) else str(blob).encode("utf-8", "surrogateescape")
        for token in tokens:
            raw = token.encode("utf-8")
            if raw in data:
                found.append((label, token, True))
            elif any(piece.encode("utf-8") in data for piece in token_pieces(token)):
                found.append((label, token, False))
    return found


def file_texts(paths):
    """{label: bytes} of every file under paths (for token_hits), each read as read_for_scan does."""
    texts = {}
    for root in paths:
        for top, _dirs, names in os.walk(root):
            for name in names:
                path = os.path.join(top, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                try:
                    texts["file %s" % os.path.relpath(path, os.path.dirname(root))] = read_for_scan(path)
                except OSError:
                    continue
    return texts


def _v(name, expected, offenders, describe, diagnosis=None):
    if not offenders:
        return []
    shown = "; ".join(describe(item) for item in offenders[:5])
    more = " (and %d more)" % (len(offenders) - 5) if len(offenders) > 5 else ""
    return [Violation(name, expected, shown + more, diagnosis)]


def server_violations(server):
    """What the scan server's records show against SCAN-SECRET-1, SCAN-UPLOAD-5 and the
    one-outcome rule (SCAN-RECONCILE-3, -4), and SCAN-CLAIM-3 (no reservation to two request ids)."""
    calls = server.calls()
    found = _v("SCAN-SECRET-1: the token only in the Authorization header",
               "no token, nor a 16-character piece of one, in a request target, another header or a body",
               [(c, where) for c in calls for where in c.secret_places],
               lambda item: "%s %s: in %s" % (item[0].method, item[0].path, item[1]),
               "send the token only as 'Authorization: Bearer <token>'")
    different, both, after = [], [], []
    for res in server.reservations():
        digests = []
        for call in res.puts:
            if call.complete and call.body_sha256 not in digests:
                digests.append(call.body_sha256)
        if len(digests) > 1:
            different.append((res, len(digests)))
        accepted_put = next((c for c in res.puts if c.accepted), None)
        accepted_report = next((c for c in res.terminals if c.accepted), None)
        if accepted_put is not None and accepted_report is not None:
            both.append(res)
        if res.touched:  # the check changed the server's mind: what came after is the check's story
            continue
        first = accepted_put or accepted_report
        if first is None:
            continue
        for call in res.puts + res.terminals:
            if call.t <= first.t or call is first:
                continue
            same = (call.verb == first.verb and ((call.verb == "bundle" and call.body_sha256 == first.body_sha256)
                                                 or (call.verb == "terminal" and call.body == first.body)))
            if not same:
                after.append((res, first, call))
    found += _v("SCAN-UPLOAD-5: a retried upload is the same upload", "every whole upload of a reservation "
                "carries the same bytes", different,
                lambda item: "reservation %d: %d different bundles" % (item[0].reservation_id, item[1]),
                "upload the bundle adopted once, byte for byte, on every retry")
    found += _v("SCAN-RECONCILE-3, -4: one outcome per reservation", "an accepted bundle or an accepted report, "
                "never both", both, lambda res: "reservation %d" % res.reservation_id)
    found += _v("SCAN-RECONCILE-1: once accepted, nothing else is sent", "no other mutation for a reservation "
                "after the server accepted one", after,
                lambda item: "reservation %d: %s %s after its %s was accepted" % (
                    item[0].reservation_id, item[2].method, item[2].path.rsplit("/", 1)[-1],
                    "bundle" if item[1].verb == "bundle" else "report"),
                "read the status before any mutation, and believe a resolution")
    granted = collections.defaultdict(list)
    for request_id, rid in server.granted().items():
        granted[rid].append(request_id)
    found += _v("SCAN-CLAIM-3: one request id per reservation", "no reservation granted to two request ids",
                sorted((rid, ids) for rid, ids in granted.items() if len(ids) > 1),
                lambda item: "reservation %d to %d request ids" % (item[0], len(item[1])))
    return found
