"""The reference scan [example work]: four rules read line by line, redacted findings, a fixed
order (SCAN-WORK-1 to SCAN-WORK-3).

These checks judge what the reference node's section 3 does with a target's bytes, so they run
only with --reference: a copy that scans for something else replaces these clauses (D23). What
they protect is the example's promise to whoever reads a bundle: every planted secret is found by
its rule, the secret itself never leaves the runner (a fingerprint and a four-character prefix
do), a line is never held whole (it is scanned in pieces of MAX_BUNDLE_LINE_BYTES / 4 bytes), and
the same bytes always give the same event lines, so two scans can be compared line by line.
"""

import hashlib
import re

from conformance.checks import check
from conformance.checks.scan._common import describe_run
from conformance.planes.scan import deploy as _deploy
from conformance.planes.scan.bundles import read_bundle

# SCAN-WORK-1: the four rules, in the contract's order (the check's own copy of the example's
# patterns: what a finding is expected to be is computed from these, not read from the node).
RULES = (
    ("aws_access_key_id", re.compile(r"AKIA[0-9A-Z]{16}")),
    ("private_key_block", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("github_token", re.compile(r"gh[pousr]_[A-Za-z0-9]{36}")),
    ("generic_secret_assignment",
     re.compile(r"(?i)(api[_-]?key|secret|token|passwd|password)\s*[:=]\s*['\"]?[A-Za-z0-9/+_\-]{16,}")),
)
# SCAN-WORK-1: a line is scanned in pieces of MAX_BUNDLE_LINE_BYTES / 4 bytes.
# SCAN-WORK-2: a finding shows this many characters of its match, then an ellipsis.
PREFIX_CHARS = 4
ELLIPSIS = "\u2026"

# One secret of each rule, each on its own line (made of pieces so that this file is no secret).
AWS_KEY = "AKIA" + "Q7XK2M4P9RZ3W8VY"
PRIVATE_KEY = "-----BEGIN " + "RSA PRIVATE KEY-----"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GENERIC = "api_key = '" + "Zx9Yw8Vu7Ts6Rq5Po4" + "'"
SECRET_LINES = [
    b"# configuration of the demo service",
    ("aws = %s" % AWS_KEY).encode("ascii"),
    PRIVATE_KEY.encode("ascii"),
    ("export GH=%s" % GITHUB_TOKEN).encode("ascii"),
    b"nothing to see here",
    GENERIC.encode("ascii"),
    b"\xff\xfe not UTF-8, replaced, still scanned: " + AWS_KEY[:4].encode("ascii") + b"ZZZZ9999YYYY8888",
]


def piece_bytes():
    """A scan piece: a quarter of the MAX_BUNDLE_LINE_BYTES in force (D30)."""
    return _deploy.MAX_BUNDLE_LINE_BYTES // 4


def expected_findings(target_name, data):
    """The findings SCAN-WORK-1..3 ask for: by line, then piece, then rule, then position."""
    PIECE_BYTES = piece_bytes()
    found = []
    for number, line in enumerate(data.split(b"\n"), 1):
        for start in range(0, max(len(line), 1), PIECE_BYTES):
            text = line[start:start + PIECE_BYTES].decode("utf-8", "replace")
            for rule, pattern in RULES:
                for match in pattern.finditer(text):
                    secret = match.group(0)
                    found.append({"type": "finding", "target": target_name, "line": number, "rule": rule,
                                  "fingerprint": hashlib.sha256(secret.encode("utf-8")).hexdigest(),
                                  "redacted": secret[:PREFIX_CHARS] + ELLIPSIS})
    return found


def scan_events(ctx, plane, res):
    """The event documents of the bundle the server accepted for res (fails without one)."""
    ctx.expect(res.resolution == "bundle_accepted" and res.bundle_path,
               expected="the reservation ends with its bundle accepted",
               actual=lambda: "resolution %s (%s)" % (res.resolution, describe_run(plane)),
               diagnosis="scan the targets, write the bundle and upload it: the reservation ended without its bundle "
                         "accepted")
    report = read_bundle(res.bundle_path, res)
    ctx.expect(not report.problems, expected="an accepted bundle with a good envelope",
               actual=lambda: "; ".join(report.problems[:3]),
               diagnosis="write the bundle's header and trailer exactly as SCAN-BUNDLE-1 and -2 give them for this "
                         "reservation")
    return report


def findings_of(report, target_name):
    return [e for e in report.events if e.get("type") == "finding" and e.get("target") == target_name]


def describe_findings(found):
    return "[%s]" % ", ".join("%s@%s %s" % (f.get("rule"), f.get("line"), f.get("redacted")) for f in found[:8])


@check("work.rules", clauses=["SCAN-WORK-1", "SCAN-WORK-2"], level="MUST",
       title="each of the four rules finds its secret, redacted to a fingerprint and a prefix",
       fakes="one target with one secret of each rule on its own line (and one on a line that is not UTF-8)",
       expected="the accepted bundle has one finding per planted secret with its line, rule, the SHA-256 of "
                "the match and its first four characters plus an ellipsis; no secret's text anywhere in the "
                "bundle")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    data = b"\n".join(SECRET_LINES) + b"\n"
    target = plane.add_target("config.env", data)
    res = plane.add_assignment(targets=[target])
    # Act
    plane.start()
    plane.wait_resolved(res)
    # Assert
    report = scan_events(ctx, plane, res)
    found = findings_of(report, "config.env")
    wanted = expected_findings("config.env", data)
    ctx.expect(sorted(set(f.get("rule") for f in found)) == sorted(rule for rule, _p in RULES),
               expected="a finding of each rule: %s" % ", ".join(rule for rule, _p in RULES),
               actual=lambda: "findings %s" % describe_findings(found),
               diagnosis="apply all four rules of SCAN-WORK-1 to every line")
    ctx.expect(found == wanted, expected="exactly the findings %s" % describe_findings(wanted),
               actual=lambda: "the findings %s (first difference: %r)" % (
                   describe_findings(found), next(((a, b) for a, b in zip(found, wanted) if a != b), None)),
               diagnosis="each finding is {type, target, line, rule, fingerprint: sha256 of the match, redacted: "
                         "its first 4 characters and an ellipsis}")
    with open(res.bundle_path, "rb") as handle:
        raw = handle.read()
    leaked = [s for s in (AWS_KEY, PRIVATE_KEY, GITHUB_TOKEN, GENERIC[:-1]) if s[PREFIX_CHARS:].encode("ascii") in raw]
    ctx.expect(not leaked, expected="no planted secret's text in the bundle",
               actual=lambda: "the bundle holds %s" % ", ".join(s[:PREFIX_CHARS] + "..." for s in leaked),
               diagnosis="SCAN-WORK-2: write the fingerprint and a prefix, never the match")


@check("work.long-line", clauses=["SCAN-WORK-1"], level="MUST",
       title="a line longer than a piece is scanned in pieces of MAX_BUNDLE_LINE_BYTES / 4",
       fakes="a target whose second line is two pieces and 7,000 bytes long: a secret inside its second piece, one straddling "
             "the first cut, then a third line with a secret",
       expected="the secret inside the second piece is found on line 2; the straddling one is not (no line is "
                "held whole); the third line's secret is found on line 3")
def _(ctx):
    # Arrange
    PIECE_BYTES = piece_bytes()
    plane = ctx.plane()
    straddle_at = PIECE_BYTES - 8  # the cut falls inside this secret
    inside_at = PIECE_BYTES + 1000  # wholly inside the second piece
    line = bytearray(b"x" * (2 * PIECE_BYTES + 7000))
    line[straddle_at - 1:straddle_at + 21] = b" " + GITHUB_TOKEN[:21].encode("ascii")
    line[straddle_at + 21:straddle_at + 41] = GITHUB_TOKEN[21:].encode("ascii") + b" "
    line[inside_at - 1:inside_at + 21] = b" " + AWS_KEY.encode("ascii") + b" "
    data = b"first line\n" + bytes(line) + b"\n" + PRIVATE_KEY.encode("ascii") + b"\n"
    target = plane.add_target("long.txt", data)
    res = plane.add_assignment(targets=[target])
    # Act
    plane.start()
    plane.wait_resolved(res)
    # Assert
    report = scan_events(ctx, plane, res)
    found = [(f.get("line"), f.get("rule")) for f in findings_of(report, "long.txt")]
    wanted = [(2, "aws_access_key_id"), (3, "private_key_block")]
    ctx.expect(found == wanted, expected="findings (line, rule) %r" % wanted,
               actual="findings %r" % found,
               diagnosis="scan a long line in pieces of %d bytes, counting it as one line; a match cut by a piece "
                         "boundary is not found, because the line is never held whole" % PIECE_BYTES)


@check("work.order", clauses=["SCAN-WORK-3"], level="MUST",
       title="findings in line, rule, then position order, before target_done; the same bytes give the same lines",
       fakes="two reservations, each with one target of the same name and bytes: lines holding several rules "
             "in the reverse of rule order, and two matches of one rule",
       expected="within a line, findings in rule order then position; each target's findings precede its "
                "target_done; both bundles have the same event lines")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    data = ("password: %s and %s\n" % ("Q1w2E3r4T5y6U7i8O9p0", AWS_KEY)).encode("ascii") + \
        ("%s %s token=%s %s\n" % (GITHUB_TOKEN, AWS_KEY, "Abcdefghijklmnopqrst", "AKIA" + "B" * 16)).encode("ascii")
    first = plane.add_assignment(targets=[plane.add_target("mixed.txt", data)])
    second = plane.add_assignment(targets=[plane.add_target("mixed.txt", data)])
    # Act
    plane.start()
    plane.wait_resolved(first)
    plane.wait_resolved(second)
    # Assert
    one, two = scan_events(ctx, plane, first), scan_events(ctx, plane, second)
    found = [(f.get("line"), f.get("rule"), f.get("redacted")) for f in findings_of(one, "mixed.txt")]
    wanted = [(f["line"], f["rule"], f["redacted"]) for f in expected_findings("mixed.txt", data)]
    ctx.expect(found == wanted, expected="findings in the order %r" % wanted, actual="in the order %r" % found,
               diagnosis="order findings by line, then rule (the order of SCAN-WORK-1), then position in the line")
    types = [e.get("type") for e in one.events]
    ctx.expect(types and types[-1] == "target_done" and "target_done" not in types[:-1],
               expected="every finding before the target's target_done", actual="event types %r" % types,
               diagnosis="write a target's findings, then its target_done")
    ctx.expect(one.events == two.events, expected="two scans of the same bytes write the same event lines",
               actual=lambda: "first %r; second %r" % (one.events[:4], two.events[:4]),
               diagnosis="nothing but the bytes (no time, no random, no set order) may decide the findings")
