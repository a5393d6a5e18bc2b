"""Terminal reports: the report's exact shape and fixed words, diagnostics that say what failed
and never how the code looked, a report fitted into 16 KiB without dropping a diagnostic, and
the same bytes on every send (SCAN-TERMINAL-1 to SCAN-TERMINAL-4).

A report is how a slot gives back work it cannot finish. The server binds its receipt to the
report's digest, so a report rebuilt on each send (a new occurrence id, a new instant) is another
report and is refused as a conflict; a report over 16 KiB is refused outright. Diagnostics cross a
trust boundary: an exception text or a traceback carries paths, argv and URLs.
"""

import hashlib
import json
import os

from conformance import schema as _schema
from conformance.checks import check
from conformance.checks.scan._common import PHASE_TIMEOUT_S, describe_run, faults
from conformance.planes.scan import canonical

SCHEMAS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))),
                       "contract", "schemas", "scan")
# SCAN-TERMINAL-1: the only (failure_code, detail) pairs a report may carry.
REPORT_WORDS = (("client_process_failed", "local worker execution failed"),
                ("client_storage_failed", "local worker storage operation failed"),
                ("client_storage_failed", "pending result bundle is missing"))
TERMINAL_REPORT_MAX_BYTES = 16384  # SCAN-TERMINAL-3
MAX_DIAGNOSTICS = 8  # SCAN-TERMINAL-2
# SCAN-TERMINAL-3 asks for the largest budget that fits: one more byte of body text adds at most
# one escaped character (12 bytes for a surrogate pair) to each diagnostic, so a fitted report is
# never this much below the limit.
MAX_FIT_SHORTFALL_BYTES = 12 * MAX_DIAGNOSTICS + 64
# The error body of every failed upload in terminal.fit, sent as UTF-8: about 40 KiB (under
# MAX_ERROR_BODY_BYTES) of 1-, 2-, 3- and 4-byte characters (escaped in the report as 6 or 12
# bytes), so three of them need fitting and a cut at an arbitrary byte lands inside a character.
BIG_ERROR_TEXT = (u"\u00e9\u20ac\U0001f600x" * 6000)[:15000]
# terminal.fit: the worker's error delay, low so that several failed uploads come in a second.
FIT_ERROR_DELAY_S = 0.1
# terminal.fit: failed uploads before the ready bundle is taken away.
FIT_FAILED_UPLOADS = 3
# What no diagnostic may carry (SCAN-TERMINAL-2, D10), besides the plane's paths and secrets.
FORBIDDEN_TEXTS = ("Traceback", 'File "', "_assignment_runner", "/api/v1/", "https://", ".py")


def load_schema(name):
    with open(os.path.join(SCHEMAS, name + ".schema.json"), "rb") as handle:
        return json.loads(handle.read().decode("utf-8"))


def wrong_pin_target(plane):
    """A target whose pinned digest is not that of its bytes: every scan of it fails."""
    target = plane.add_target("pinned.txt", b"alpha = 1\n")
    target["sha256"] = hashlib.sha256(b"something else").hexdigest()
    return target


def report_shape_problems(ctx, plane, call):
    """What is off in one report's bytes (SCAN-TERMINAL-1, -2)."""
    found = list(call.problems)
    doc = call.doc
    if not isinstance(doc, dict):
        return found + ["not a JSON object"]
    if (doc.get("failure_code"), doc.get("detail")) not in REPORT_WORDS:
        found.append("failure_code %r with detail %r is not one of the contract's pairs"
                     % (doc.get("failure_code"), doc.get("detail")))
    diagnostic_schema = load_schema("diagnostic")
    for index, diagnostic in enumerate(doc.get("diagnostics") or []):
        errors = _schema.validate(diagnostic, diagnostic_schema)
        if errors:
            found.append("diagnostic %d: %s" % (index, "; ".join(errors[:3])))
    text = call.body.decode("ascii", "replace")
    forbidden = list(FORBIDDEN_TEXTS) + [plane.state_home, plane.data_home, plane.tmp, plane.home]
    node_path = getattr(ctx.node, "path", None)
    if node_path:
        forbidden += [node_path, os.path.basename(node_path)]
    for piece in forbidden:
        if piece and piece in text:
            found.append("the report carries %r" % piece)
    return found


@check("terminal.report", clauses=["SCAN-TERMINAL-1", "SCAN-TERMINAL-2"], level="MUST",
       title="a failed scan is reported with exactly its members, the fixed words and clean diagnostics",
       fakes="one assignment whose only target's pinned SHA-256 does not match its bytes: every scan fails",
       expected="POST .../terminal, canonical, exactly failure_code, detail and diagnostics, a pair of the "
                "contract's words; each diagnostic valid (diagnostic schema); no traceback, path, file name, "
                "argv, URL or token; the receipt accepted")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment(targets=[wrong_pin_target(plane)])
    # Act
    plane.start()
    plane.wait_resolved(res)
    plane.stop()
    # Assert
    ctx.expect(res.resolved_by == "terminal" and res.terminals, expected="a terminal report accepted",
               actual=lambda: describe_run(plane), diagnosis="a scan that cannot finish is reported")
    for call in res.terminals:
        problems = report_shape_problems(ctx, plane, call)
        ctx.expect(not problems, expected="a report of exactly the contract's shape and words",
                   actual=lambda: "; ".join(problems[:4]),
                   diagnosis="send canonical {failure_code, detail, diagnostics} with fixed words; a diagnostic "
                             "names the failure's class and code, never its message")
    ctx.expect(res.puts == [], expected="no upload for a failed scan", actual="%d PUT(s)" % len(res.puts),
               diagnosis="a scan that cannot finish is reported, never uploaded: no PUT of its partial bundle")


@check("terminal.fit", clauses=["SCAN-TERMINAL-3", "SCAN-TERMINAL-2"], level="MUST",
       title="diagnostics that do not fit in 16 KiB are shortened on UTF-8 boundaries, none dropped",
       fakes="every upload answered 503 with a 15,000-character body of 2-, 3- and 4-byte characters; after "
             "three, the ready bundle is deleted (the report: pending result bundle is missing)",
       expected="one report of at most 16384 bytes and not far below; one diagnostic per failed upload (up to 8, "
                "the last the storage failure); each body text a prefix of the answer's text, with "
                "original_bytes, sha256 and truncated true")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    error_body = json.dumps({"error": {"code": "unavailable", "message": BIG_ERROR_TEXT}},
                            ensure_ascii=False).encode("utf-8")
    plane.server.add_fault(faults.status(503, body=error_body), plane.server.bundle_match(res))
    # Act
    plane.start(error_delay_s=FIT_ERROR_DELAY_S)
    plane.wait_calls("bundle", FIT_FAILED_UPLOADS, reservation=res)
    os.unlink(os.path.join(plane.bundle_dir, "ready", "%s.jsonl" % res.bundle_id))
    plane.wait_resolved(res)
    plane.stop()
    # Assert
    ctx.expect(res.resolved_by == "terminal" and res.terminal_body is not None,
               expected="a terminal report once the bundle is gone", actual=lambda: describe_run(plane),
               diagnosis="when the ready bundle is gone, send a terminal report (client_storage_failed, pending result "
                         "bundle is missing)")
    report = res.terminal_body
    doc = json.loads(report.decode("ascii"))
    failed = [c for c in res.puts if c.t < res.terminals[0].t]
    diagnostics = doc.get("diagnostics") or []
    ctx.expect(len(report) <= TERMINAL_REPORT_MAX_BYTES,
               expected="a report of at most %d bytes" % TERMINAL_REPORT_MAX_BYTES,
               actual="%d bytes" % len(report),
               diagnosis="fit the report into 16 KiB by shortening the body texts of its diagnostics")
    want = min(MAX_DIAGNOSTICS, len(failed) + 1)
    ctx.expect(len(diagnostics) == want,
               expected="%d diagnostics (%d failed uploads and the storage failure, at most %d)"
                        % (want, len(failed), MAX_DIAGNOSTICS),
               actual="%d diagnostics" % len(diagnostics),
               diagnosis="shorten the body texts to fit; never drop a diagnostic to make room")
    problems = report_shape_problems(ctx, plane, res.terminals[0])
    ctx.expect(not problems, expected="each diagnostic of the contract's shape", actual=lambda: "; ".join(problems[:4]),
               diagnosis="give each diagnostic exactly the contract's members and fixed words")
    original = error_body.decode("utf-8")
    decoded = error_body
    bodies = [d["http"]["body"] for d in diagnostics if isinstance(d.get("http"), dict)]
    ctx.expect(len(bodies) == want - 1, expected="an http member on each failed upload's diagnostic",
               actual="%d of %d" % (len(bodies), want - 1),
               diagnosis="give each failed upload's diagnostic an http member with the answer's status and body")
    for body in bodies:
        text = body.get("text", "")
        ctx.expect(original.startswith(text) and body.get("original_bytes") == len(decoded)
                   and body.get("sha256") == hashlib.sha256(decoded).hexdigest(),
                   expected="each body text a prefix of the answer's %d bytes, with their size and digest"
                            % len(decoded),
                   actual="text of %d characters (a prefix: %s), original_bytes %r, sha256 %r"
                          % (len(text), original.startswith(text), body.get("original_bytes"), body.get("sha256")),
                   diagnosis="cut the body's bytes on a UTF-8 boundary and decode the prefix")
        ctx.expect(body.get("truncated") is (len(text.encode("utf-8")) < len(decoded)),
                   expected="truncated true exactly when the text is shorter than the body",
                   actual="truncated %r for %d of %d bytes" % (body.get("truncated"), len(text.encode("utf-8")),
                                                                len(decoded)),
                   diagnosis="set truncated to true exactly when the body text was cut short")
    ctx.expect(len(report) >= TERMINAL_REPORT_MAX_BYTES - MAX_FIT_SHORTFALL_BYTES,
               expected="the largest report that fits: at least %d bytes"
                        % (TERMINAL_REPORT_MAX_BYTES - MAX_FIT_SHORTFALL_BYTES),
               actual="%d bytes" % len(report),
               diagnosis="search the largest shared text budget that fits (binary search), shares in proportion")


@check("terminal.replay", clauses=["SCAN-TERMINAL-4"], level="MUST",
       title="a report is persisted before its first send and replayed byte for byte after a crash",
       fakes="a target whose pin never matches; the first report is held unanswered (not kept); the worker is "
             "SIGKILLed there and restarted",
       expected="slot-0.json held phase terminal_pending with the report sent; the restarted worker's report "
                "is the same bytes (occurrence_id and occurred_at included), accepted")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment(targets=[wrong_pin_target(plane)])
    # Act
    first = plane.start(kill_at=plane.held("terminal", reservation=res))
    first.wait(PHASE_TIMEOUT_S)
    on_disk = (first.state_files or {}).get("slot-0.json")
    second = plane.restart()
    plane.wait_resolved(res)
    plane.stop()
    # Assert
    ctx.expect(first.fired and res.terminals, expected="the first report held, then the crash",
               actual=lambda: describe_run(plane),
               diagnosis="persist the report, then send it: the worker never sent a report this check could crash it "
                         "on")
    sent = res.terminals[0].body
    state = json.loads(on_disk.decode("ascii")) if on_disk else {}
    ctx.expect(state.get("phase") == "terminal_pending" and canonical(state.get("terminal")) == sent,
               expected="slot-0.json held {phase: terminal_pending, terminal: the report sent} at the crash",
               actual="phase %r, report held %s the one sent" % (state.get("phase"), "equal to" if state.get(
                   "terminal") is not None and canonical(state.get("terminal")) == sent else "not"),
               diagnosis="persist the fitted report before its first send")
    later = [c for c in res.terminals if c.t >= second.t_start]
    ctx.expect(bool(later) and all(c.body == sent for c in later),
               expected="every report after the restart byte-identical to the first (%d bytes)" % len(sent),
               actual=lambda: "%d report(s) after the restart; first differs: %s" % (
                   len(later), bool(later) and later[0].body != sent),
               diagnosis="send the stored report's bytes; never rebuild it (a new occurrence_id or instant)")
    ctx.expect(res.resolved_by == "terminal", expected="the replayed report accepted",
               actual=lambda: describe_run(plane),
               diagnosis="after a restart in terminal_pending, send the stored report until the server accepts it")
