"""The reference normaliser: the reference node's own child mode (CRAWLER-NORM-1..3).

Example work: these checks judge what nodes/crawler_job.py's section 3 makes of
the source, so they run only with --reference (a copy of the node that
normalises differently is not judged by them). No pin here: the node runs its
own file as the normaliser (CRAWLER-CHILD-1, D8), and what it stores is
compared, byte for byte and then field by field, with what the harness's own
normaliser (conformance.planes.crawler_docs.Normalizer) makes of the same bytes
(plane.reference_problems), on top of the platform's rules (plane.verify_result).
A source the reference refuses must come back as a bundle naming the child's
code, which the node only reports when the child's failure line was admissible
(CRAWLER-CHILD-8).

norm.child-protocol runs the node file in child mode directly (the argv of
CRAWLER-CHILD-1, stdin = the normalisation input) to see what the bundle
cannot show: the exact stdout and stderr of CRAWLER-NORM-3. What any node's
child mode must do is judged by child.own-mode.
"""

from conformance.checks import check
from conformance.checks.crawler._common import (
    bulky_csv, child_mode_input, docs, each_variant, expect_reported, expect_success, run_child_mode)

JSONL = {"data_format": "jsonl", "filename": "data.jsonl", "source_content_type": "application/x-ndjson"}


def _limits(**changes):
    limits = docs.default_limits()
    limits.update(changes)
    return limits


def _expect_code(ctx, plane, code, variant):
    """A bundle naming `code` is the one object stored; no result."""
    expect_reported(ctx, plane, code, variant)
    ctx.expect(len(plane.puts()) == 1 and plane.stored_result() is None,
               expected="exactly one PUT, the bundle, and no result stored (variant %s)" % variant,
               actual=lambda: "%d PUT(s); result stored: %s" % (len(plane.puts()), plane.stored_result() is not None),
               diagnosis="a normalisation failure ends the run with its bundle alone: no result PUT once the child's "
                         "answer is refused")


def _expect_normalised(ctx, plane, variant):
    """expect_success, naming the variant when the run did not succeed; then the
    stored result byte for byte the one the reference normaliser gives."""
    line = plane.status_line()
    ctx.expect(plane.result.exit_code == 0 and line is None,
               expected="a stored result, exit 0, silent (variant %s)" % variant,
               actual=lambda: "exit %s, status line %s; %s" % (
                   plane.result.exit_code, "%s/%s" % line if line else repr(plane.result.stderr[:200]),
                   plane.describe_exchanges()),
               diagnosis="the node's normaliser refused a source the reference accepts")
    expect_success(ctx, plane)
    problems = plane.reference_problems(plane.stored_result().raw)
    ctx.expect(not problems, expected="the reference normaliser's result for this source (variant %s)" % variant,
               actual=lambda: "; ".join(problems[:4]),
               diagnosis="the content (its rows, columns or values) is not what CRAWLER-NORM-1 and -2 make "
                         "of these bytes")


# ---------------------------------------------------------------- accepted sources

CSV_SOURCES = [
    ("quotes, embedded CRLF, non-ASCII, CRLF ends",
     b'name,comment,city\r\n"Smith, J","said ""hi""\r\nthen left",Z\xc3\xbcrich\r\n'
     b'Lee,"tab\there",\xe6\x9d\xb1\xe4\xba\xac\r\n'),
    ("bare \\r ends, no final line end", b"a,b\r1,2\r3,4"),
    ("header only (no rows)", b"only,header\n"),
    ("empty and quoted-empty fields", b'a,b,c\n,,\n"",x,""\n'),
    ("control character and U+2028 in a value", b'k,v\n1,"line\xe2\x80\xa8sep\x01"\n'),
    ("a quote inside an unquoted field", b'a,b\nx"y,2\n'),
    ("unterminated quote at the end (csv reads it)", b'a,b\n1,"2\n'),
    ("numbers stay strings", b"n,m\n007,-1.50\n"),
]

JSONL_SOURCES = [
    ("CRLF, blank lines, mixed key order, escapes, int/bool/null",
     b'{"b":1,"a":"x"}\r\n\r\n{"a":"\\u00e9","b":-9007199254740991}\n\n{"b":true,"a":null}\n'
     b'{"a":"last","b":false}'),
    ("whitespace inside objects, one \\r removed", b'{ "z" : "1" , "y" : 2 }\r\n{"y":3,"z":"4"}\r\r\n'),
    ("one column", b'{"only":"v"}\n'),
]


@check("norm.csv", clauses=["CRAWLER-NORM-1", "CRAWLER-NORM-2", "CRAWLER-NORM-3"], level="MUST",
       title="CSV sources are normalised as Python's csv module reads them, to canonical JSON lines",
       fakes="no pin (the node's own child); CSV sources: %s" % "; ".join(label for label, _ in CSV_SOURCES),
       expected="each: exit 0, silent, the stored result byte for byte the harness's own normalisation "
                "(content, row_count, column_names, digests)")
def _(ctx):
    def act(label, source):
        # Arrange
        plane = ctx.plane(source=source)
        # Act
        plane.run()
        # Assert
        _expect_normalised(ctx, plane, label)

    each_variant(ctx, CSV_SOURCES, act)


@check("norm.jsonl", clauses=["CRAWLER-NORM-1", "CRAWLER-NORM-2", "CRAWLER-NORM-3"], level="MUST",
       title="JSON-lines sources: columns are the first object's keys sorted; values keep their JSON type",
       fakes="no pin; JSON-lines sources: %s" % "; ".join(label for label, _ in JSONL_SOURCES),
       expected="each: exit 0, silent, the stored result byte for byte the harness's own normalisation")
def _(ctx):
    def act(label, source):
        # Arrange
        plane = ctx.plane(source=source, **JSONL)
        # Act
        plane.run()
        # Assert
        _expect_normalised(ctx, plane, label)

    each_variant(ctx, JSONL_SOURCES, act)


# ---------------------------------------------------------------- refused sources

MALFORMED = [
    ("csv: a short record", b"a,b\n1,2\n3\n", {}),
    ("csv: a long record", b"a,b\n1,2,3\n", {}),
    ("csv: duplicate column name", b"a,a\n1,2\n", {}),
    ("csv: empty column name", b"a,,c\n1,2,3\n", {}),
    ("csv: a blank line", b"a,b\n1,2\n\n3,4\n", {}),
    ("csv: empty source", b"", {}),
    ("jsonl: a float", b'{"a":1}\n{"a":1.5}\n', JSONL),
    ("jsonl: other keys", b'{"a":1,"b":2}\n{"a":1,"c":2}\n', JSONL),
    ("jsonl: a missing key", b'{"a":1,"b":2}\n{"a":1}\n', JSONL),
    ("jsonl: a nested object", b'{"a":{"x":1}}\n', JSONL),
    ("jsonl: an array line", b'[1,2]\n', JSONL),
    ("jsonl: duplicate keys", b'{"a":1,"a":2}\n', JSONL),
    ("jsonl: not JSON", b'{"a":1}\nnot json\n', JSONL),
    ("jsonl: a whitespace-only line", b'{"a":1}\n  \n', JSONL),
    ("jsonl: an escaped lone surrogate", b'{"a":"\\ud800"}\n', JSONL),
    ("jsonl: an integer above 2^53-1", b'{"a":9007199254740992}\n', JSONL),
]


@check("norm.malformed", clauses=["CRAWLER-NORM-1"], level="MUST",
       title="a source that is not the contract's CSV or JSON lines is CRAWLER_NORMALIZATION_FAILED",
       fakes="no pin; sources: %s" % "; ".join(label for label, _s, _o in MALFORMED),
       expected="each: CRAWLER_NORMALIZATION_FAILED bundle, exit 0; no result stored")
def _(ctx):
    def act(label, value):
        source, options = value
        # Arrange
        plane = ctx.plane(source=source, **options)
        # Act
        plane.run()
        # Assert
        _expect_code(ctx, plane, "CRAWLER_NORMALIZATION_FAILED", label)

    each_variant(ctx, [(label, (source, options)) for label, source, options in MALFORMED], act)


ENCODING = [
    ("csv: a BOM", b"\xef\xbb\xbfa,b\n1,2\n", {}),
    ("jsonl: a BOM", b'\xef\xbb\xbf{"a":1}\n', JSONL),
    ("csv: an invalid byte in a later row", b"a,b\n1,2\n3,\xff\n", {}),
    ("jsonl: an invalid byte in a string", b'{"a":"x"}\n{"a":"\xff"}\n', JSONL),
    ("csv: a UTF-8-encoded surrogate", b"a\n\xed\xa0\x80\n", {}),
    ("csv: an overlong encoding", b"a\n\xc0\xaf\n", {}),
    ("csv: a sequence cut at the end", b"a\nx\xc3", {}),
]


@check("norm.encoding", clauses=["CRAWLER-NORM-1"], level="MUST",
       title="a BOM or invalid UTF-8 is CRAWLER_SOURCE_ENCODING_UNSUPPORTED, not a parse failure",
       fakes="no pin; sources: %s" % "; ".join(label for label, _s, _o in ENCODING),
       expected="each: CRAWLER_SOURCE_ENCODING_UNSUPPORTED bundle, exit 0; no result stored")
def _(ctx):
    def act(label, value):
        source, options = value
        # Arrange
        plane = ctx.plane(source=source, **options)
        # Act
        plane.run()
        # Assert
        _expect_code(ctx, plane, "CRAWLER_SOURCE_ENCODING_UNSUPPORTED", label)

    each_variant(ctx, [(label, (source, options)) for label, source, options in ENCODING], act)


# Three rows of three columns; its normalised content's length is the
# max_normalized_bytes boundary.
LIMITS_SOURCE = b"a,b,c\n1,2,3\n4,5,6\n7,8,9\n"
LIMITS_JSONL = b'{"a":1}\n{"a":2}\n{"a":3}\n'


# About 7 MiB of normalised content: within an 8 MiB max_normalized_bytes, but
# its base64 (4/3 larger) cannot fit a result of MAX_CRAWLER_RESULT_BYTES.
BULKY_SOURCE = bulky_csv(7 * 1024 * 1024)


@check("norm.limits", clauses=["CRAWLER-NORM-2", "CRAWLER-CHILD-11"], level="MUST",
       title="more than max_rows rows, max_columns columns or max_normalized_bytes is "
             "CRAWLER_LIMIT_EXCEEDED; exactly at each limit is not",
       fakes="no pin; a CSV source of 3 rows x 3 columns (and a JSON-lines one of 3 rows) under limits "
             "one below and exactly at its size; a 7 MiB CSV whose base64 cannot fit the result bound",
       expected="one below: CRAWLER_LIMIT_EXCEEDED bundle, exit 0; at the limit: the reference "
                "normaliser's result, stored")
def _(ctx):
    size = len(docs.normalize_bytes(LIMITS_SOURCE, "csv", docs.default_limits()).content)
    variants = [
        ("max_rows 2 < 3 rows", (LIMITS_SOURCE, {}, _limits(max_rows=2), "CRAWLER_LIMIT_EXCEEDED")),
        ("max_columns 2 < 3 columns", (LIMITS_SOURCE, {}, _limits(max_columns=2), "CRAWLER_LIMIT_EXCEEDED")),
        ("max_normalized_bytes %d < %d" % (size - 1, size),
         (LIMITS_SOURCE, {}, _limits(max_normalized_bytes=size - 1), "CRAWLER_LIMIT_EXCEEDED")),
        ("jsonl: max_rows 2 < 3 rows", (LIMITS_JSONL, JSONL, _limits(max_rows=2), "CRAWLER_LIMIT_EXCEEDED")),
        ("at every limit", (LIMITS_SOURCE, {}, _limits(max_rows=3, max_columns=3, max_normalized_bytes=size), None)),
        ("max_rows 0, header only", (b"a,b\n", {}, _limits(max_rows=0), None)),
        ("content within max_normalized_bytes but a result over MAX_CRAWLER_RESULT_BYTES",
         (BULKY_SOURCE, {}, _limits(max_normalized_bytes=docs.MAX_CRAWLER_RESULT_BYTES), "CRAWLER_LIMIT_EXCEEDED")),
    ]

    def act(label, value):
        source, options, limits, code = value
        # Arrange
        plane = ctx.plane(source=source, limits=limits, **options)
        # Act
        plane.run()
        # Assert
        if code is None:
            _expect_normalised(ctx, plane, label)
        else:
            _expect_code(ctx, plane, code, label)

    each_variant(ctx, variants, act)


# ---------------------------------------------------------------- the child protocol itself

@check("norm.child-protocol", clauses=["CRAWLER-NORM-3"], level="MUST",
       title="in child mode the reference writes exactly the harness's canonical result and exits 0, or "
             "exactly one canonical failure line and exits 1",
       fakes="the harness runs [python, -I, -S, <node file>, --input-fd, 0, --result-fd, 1] itself with "
             "the six child variables and a normalisation input on stdin: a good CSV source, then a "
             "short record",
       expected="good: exit 0, stderr empty, stdout byte for byte the harness's canonical result; bad: "
                "exit 1, stdout empty, stderr {\"code\":\"CRAWLER_NORMALIZATION_FAILED\",\"status\":\"failed\"} "
                "(and at most one \\n)")
def _(ctx):
    # Arrange / Act: a good source
    good = b"city,temp\nOslo,3\n\"Qu\xc3\xa9bec, QC\",-8\n"
    header, request = child_mode_input(good)
    run = run_child_mode(ctx, header, good)
    want = docs.canonical(docs.build_result(header, docs.normalize_bytes(good, "csv", request["query"]["limits"])))
    # Assert
    ctx.expect(run.returncode == 0 and run.stderr == b"", expected="exit 0 and nothing on stderr",
               actual="exit %d, stderr %r" % (run.returncode, run.stderr[:200]),
               diagnosis="as the normaliser, exit 0 with nothing on stderr when the input is good: warnings and logs "
                         "go nowhere")
    ctx.expect(run.stdout == want, expected="stdout exactly the canonical result (%d bytes)" % len(want),
               actual=lambda: "%d bytes: %s" % (len(run.stdout), _first_difference(want, run.stdout)),
               diagnosis="the reference child writes the result of CRAWLER-NORM-1 and -2, canonical, nothing "
                         "before or after it")

    # Arrange / Act: a refused source
    bad = b"a,b\n1,2\n3\n"
    header, _request = child_mode_input(bad)
    run = run_child_mode(ctx, header, bad)
    # Assert
    line = docs.canonical({"code": "CRAWLER_NORMALIZATION_FAILED", "status": "failed"})
    ctx.expect(run.returncode == 1 and run.stdout == b"" and run.stderr in (line, line + b"\n"),
               expected="exit 1, empty stdout, stderr %s" % line.decode(),
               actual="exit %d, %d bytes stdout, stderr %r" % (run.returncode, len(run.stdout), run.stderr[:200]),
               diagnosis="a refusing child writes one canonical failure line and exits 1")


def _first_difference(want, got):
    for index, (a, b) in enumerate(zip(want, got)):
        if a != b:
            return "first difference at byte %d: expected %r, got %r" % (
                index, want[max(0, index - 40):index + 40], got[max(0, index - 40):index + 40])
    return "one is a prefix of the other (expected %d bytes, got %d)" % (len(want), len(got))
