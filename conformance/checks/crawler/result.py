"""Result binding: a child's stdout is uploaded only if it restates what the node fetched.

CRAWLER-RESULT-1..10. The pinned scripted child (conformance/planes/crawler_child.py)
reads the real normalisation input, builds the honest result with the harness's
own builder, then lies in exactly one way (a patched field, an added or deleted
key, a non-canonical encoding). Every lie must end the same: a
CRAWLER_CHILD_INVALID failure bundle, "reported", exit 0, and the lying result
never PUT (the bundle is the only PUT). Each variant changes one rule only, so
a node that skips that one rule is caught by it; result.canonical starts with
the honest child as a control, so a node that refuses every result is caught
too.

The source is fixed (SOURCE) so the harness knows its hash, size and
normalised content before the run: some lies need the true value (the right
digest in uppercase, the content without its base64 padding).
"""

import base64
import calendar
import hashlib
import platform
import time

from conformance.checks import check
from conformance.checks.crawler._common import docs, each_variant, expect_reported, expect_success

# Three rows of three columns (DEFAULT_SOURCE of the plane with "??" added):
# its normalised content is 118 bytes, so the base64 ends in "==" and holds a
# "+" or "/" (an unpadded or URL-safe encoding differs from the standard one).
SOURCE = (b"city,temp_c,observed\nOslo,3,2024-01-05\nLima,19,2024-01-05\n"
          b"\"Qu\xc3\xa9bec, QC\",-8,2024-01-05??\n")
SOURCE_SHA256 = hashlib.sha256(SOURCE).hexdigest()
# What the harness's child makes of SOURCE (checked against it where used).
SOURCE_HEADER = ["city", "temp_c", "observed"]
SOURCE_ROWS = [["Oslo", "3", "2024-01-05"], ["Lima", "19", "2024-01-05"],
               ["Qu\u00e9bec, QC", "-8", "2024-01-05??"]]
ETAG = '"v42-conformance"'
LAST_MODIFIED = "Tue, 03 Nov 2026 10:00:00 GMT"

# A 64-hex value that is no digest of anything in the run.
WRONG_DIGEST = "0" * 64
OTHER_URL = "https://localhost/elsewhere.csv"       # no port: never a URL of this run
# A query.filename with non-ASCII characters: restated in the receipt, it is
# the one string of the result that "\u00e9" escaping changes.
NON_ASCII_FILENAME = "donn\u00e9es-\u6771\u4eac.csv"

R = "acquisition_receipt"
O = "observation"
DELETE = "__delete__"


def _content(limits=None):
    """The normalised content of SOURCE, as the harness's normaliser makes it
    (the scripted child's own content: the lies start from it)."""
    content = docs.normalize_bytes(SOURCE, "csv", limits or docs.default_limits()).content
    if content != _content_lines(SOURCE_HEADER, SOURCE_ROWS):
        raise RuntimeError("SOURCE_HEADER and SOURCE_ROWS no longer describe SOURCE's content")
    return content


def _lies(ctx, variants, **plane_options):
    """Run each (label, behaviour changes) as a lying child; expect CHILD_INVALID, one PUT, no result."""
    def act(label, lie):
        # Arrange
        behaviour = {"mode": "normal"}
        behaviour.update(lie)
        plane = ctx.plane(source=SOURCE, child=behaviour, **plane_options)
        # Act
        plane.run()
        # Assert
        expect_reported(ctx, plane, "CRAWLER_CHILD_INVALID", label)
        puts = plane.puts()
        ctx.expect(len(puts) == 1 and plane.stored_result() is None,
                   expected="exactly one PUT, the failure bundle; the child's result never uploaded "
                            "(variant %s)" % label,
                   actual=lambda: "%d PUT(s); result stored: %s" % (len(puts), plane.stored_result() is not None),
                   diagnosis="a result that breaks a CRAWLER-RESULT rule is never uploaded")

    each_variant(ctx, variants, act)


def _patch(*pairs):
    """A behaviour whose result has each (path, value) set; value DELETE removes the key."""
    return {"patch": [[list(path), value] for path, value in pairs]}


def _both(field, value):
    """The same field changed alike in the receipt and the observation."""
    return _patch(((R, field), value), ((O, field), value))


def _content_lines(header, rows):
    """A normalised content: the canonical JSON lines of CRAWLER-RESULT-10."""
    return b"".join(docs.canonical(line) + b"\n" for line in [header] + rows)


def _restated(content, **fields):
    """A behaviour whose result carries `content`, with every field that
    follows from the bytes restated for it (hash, size, and the summary as a
    naive child would compute it: row_count from the line ends, row_digest
    from the bytes after the first line), then `fields` (receipt and
    observation alike) on top: so a lie breaks only the rule it is about."""
    rows_part = content.partition(b"\n")[2]
    digest = hashlib.sha256(content).hexdigest()
    summary = {"row_count": content.count(b"\n") - 1, "row_digest": hashlib.sha256(rows_part).hexdigest()}
    summary.update(fields)
    pairs = [(("normalized_content",), base64.b64encode(content).decode("ascii")),
             ((R, "normalized_content_sha256"), digest), ((O, "normalized_content_sha256"), digest),
             ((R, "normalized_size_bytes"), len(content))]
    for field, value in sorted(summary.items()):
        pairs.append(((R, field), value))
        if field in ("row_count", "row_digest"):
            pairs.append(((O, field), value))
    return _patch(*pairs)


def _consistent(header, rows):
    """A behaviour whose result carries the content of `header` and `rows`,
    with every field read off it restated: a result RESULT-10 accepts."""
    content = _content_lines(header, rows)
    return _restated(content, column_names=header,
                     parsed_schema_digest=docs.digest({"column_names": header, "data_format": "csv"}))


# ---------------------------------------------------------------- CRAWLER-RESULT-1, -2

@check("result.canonical", clauses=["CRAWLER-RESULT-1"], level="MUST",
       title="a result that is not canonical JSON byte for byte is refused (D11)",
       fakes="control: the honest result; then the same document pretty-printed, with keys unsorted, "
             "with a trailing newline, with row_count written 3.0, and (for a non-ASCII query.filename) "
             "with non-ASCII escaped as \\uXXXX",
       expected="control: stored, exit 0; each other: CRAWLER_CHILD_INVALID bundle, exit 0, no result PUT")
def _(ctx):
    # Arrange / Act / Assert: the control
    plane = ctx.plane(source=SOURCE, child={"mode": "normal"})
    plane.run()
    expect_success(ctx, plane)
    # The lies
    _lies(ctx, [
        ("pretty-printed", {"encoding": "pretty"}),
        ("unsorted keys", {"encoding": "unsorted"}),
        ("a trailing newline", {"encoding": "newline"}),
        ("an integer written as a float", _both("row_count", 3.0)),
    ])
    # Only a string outside the base64 can carry non-ASCII: the filename.
    _lies(ctx, [("non-ASCII escaped", {"encoding": "ascii"})], filename=NON_ASCII_FILENAME)


@check("result.keys", clauses=["CRAWLER-RESULT-2"], level="MUST",
       title="the result, receipt and observation have exactly their keys and schema versions",
       fakes="the honest result with: an extra null key at the top, in the receipt, in the observation; "
             "a null-valued key removed from each (next_watermark, family_id, etag_digest); each of the "
             "three schema_version strings at .v2",
       expected="each: CRAWLER_CHILD_INVALID bundle, exit 0, no result PUT")
def _(ctx):
    _lies(ctx, [
        ("extra top-level key", {"add": [[["reader_pin"], None]]}),
        ("extra receipt key", {"add": [[[R, "reader_pin"], None]]}),
        ("extra observation key", {"add": [[[O, "family_id"], None]]}),
        ("next_watermark missing", _patch((("next_watermark",), DELETE))),
        ("receipt family_id missing", _patch(((R, "family_id"), DELETE))),
        ("observation etag_digest missing", _patch(((O, "etag_digest"), DELETE))),
        ("result schema v2", _patch((("schema_version",), "mostlyright-crawler-result.v2"))),
        ("receipt schema v2", _patch(((R, "schema_version"), "hosted-public-https-acquisition-receipt.v2"))),
        ("observation schema v2", _patch(((O, "schema_version"), "hosted-public-https-source-observation.v2"))),
    ])


# ---------------------------------------------------------------- CRAWLER-RESULT-3, -4

@check("result.identity", clauses=["CRAWLER-RESULT-3"], level="MUST",
       title="request_digest, source_id, adapter_id and adapter_version restate the request, in every document",
       fakes="the honest result with one of: request_digest (top, receipt, observation), source_id (top, "
             "receipt, observation), adapter_id (top, receipt), adapter_version (top, receipt) changed",
       expected="each: CRAWLER_CHILD_INVALID bundle, exit 0, no result PUT")
def _(ctx):
    _lies(ctx, [
        ("top request_digest", _patch((("request_digest",), WRONG_DIGEST))),
        ("receipt request_digest", _patch(((R, "request_digest"), WRONG_DIGEST))),
        ("observation request_digest", _patch(((O, "request_digest"), WRONG_DIGEST))),
        ("top source_id", _patch((("source_id",), "other-source"))),
        ("receipt source_id", _patch(((R, "source_id"), "other-source"))),
        ("observation source_id", _patch(((O, "source_id"), "other-source"))),
        ("top adapter_id", _patch((("adapter_id",), "external.openligadb"))),
        ("receipt adapter_id", _patch(((R, "adapter_id"), "external.openligadb"))),
        ("top adapter_version", _patch((("adapter_version",), "1.0.1"))),
        ("receipt adapter_version", _patch(((R, "adapter_version"), "1.0.1"))),
    ])


def _sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@check("result.evidence", clauses=["CRAWLER-RESULT-4"], level="MUST",
       title="what was fetched is the node's own account: URLs, media type, raw hash and size, "
             "evidence digest, attestation, status, ETag and Last-Modified digests",
       fakes="the honest result with one field changed: raw_content_sha256 (receipt, observation, "
             "uppercase), raw_size_bytes, source_url, final_url, fetched_media_type (other, null), "
             "transport_evidence_digest, egress_policy_attestation, http_status_code (receipt, observation), "
             "etag_digest and last_modified_digest set without the header, null with it, or of the "
             "unquoted ETag",
       expected="each: CRAWLER_CHILD_INVALID bundle, exit 0, no result PUT")
def _(ctx):
    _lies(ctx, [
        ("receipt raw_content_sha256", _patch(((R, "raw_content_sha256"), WRONG_DIGEST))),
        ("observation raw_content_sha256", _patch(((O, "raw_content_sha256"), WRONG_DIGEST))),
        ("raw_content_sha256 in uppercase", _both("raw_content_sha256", SOURCE_SHA256.upper())),
        ("raw_size_bytes + 1", _patch(((R, "raw_size_bytes"), len(SOURCE) + 1))),
        ("source_url", _patch(((R, "source_url"), OTHER_URL))),
        ("final_url", _patch(((R, "final_url"), OTHER_URL))),
        ("fetched_media_type text/plain", _patch(((R, "fetched_media_type"), "text/plain"))),
        ("fetched_media_type null", _patch(((R, "fetched_media_type"), None))),
        ("transport_evidence_digest", _patch(((R, "transport_evidence_digest"), WRONG_DIGEST))),
        ("egress_policy_attestation", _patch(((R, "egress_policy_attestation"), WRONG_DIGEST))),
        ("receipt http_status_code 201", _patch(((R, "http_status_code"), 201))),
        ("observation http_status_code 201", _patch(((O, "http_status_code"), 201))),
        ("receipt etag_digest without an ETag", _patch(((R, "etag_digest"), _sha(ETAG)))),
        ("observation etag_digest without an ETag", _patch(((O, "etag_digest"), _sha(ETAG)))),
        ("last_modified_digest without Last-Modified", _both("last_modified_digest", _sha(LAST_MODIFIED))),
    ])
    _lies(ctx, [
        ("etag_digest null though an ETag was served", _both("etag_digest", None)),
        ("etag_digest of the unquoted ETag", _both("etag_digest", _sha(ETAG.strip('"')))),
        ("last_modified_digest null though Last-Modified was served", _both("last_modified_digest", None)),
    ], source_etag=ETAG, source_last_modified=LAST_MODIFIED)


# ---------------------------------------------------------------- CRAWLER-RESULT-5

@check("result.normalized", clauses=["CRAWLER-RESULT-5"], level="MUST",
       title="normalized_content is padded standard base64 within max_normalized_bytes, and the "
             "node's own hash and length of it are restated",
       fakes="the honest result with: normalized_content_sha256 wrong (receipt, observation), "
             "normalized_size_bytes + 1, the content without its '=' padding, wrapped at 76 columns, "
             "in the URL-safe alphabet, with padding bits set, one byte longer than max_normalized_bytes (hash and size "
             "restated for it), normalized_media_type, _data_format, _filename changed",
       expected="each: CRAWLER_CHILD_INVALID bundle, exit 0, no result PUT")
def _(ctx):
    content = _content()
    encoded = base64.b64encode(content).decode("ascii")
    if not encoded.endswith("=") or not ("+" in encoded or "/" in encoded) or len(encoded) <= 76:
        raise RuntimeError("SOURCE no longer normalises to content with base64 padding, '+' or '/', "
                           "and more than 76 characters: choose another")
    wrapped = base64.encodebytes(content).decode("ascii").rstrip("\n")
    # The same bytes in a second spelling: the last character before the
    # padding carries bits the decoder ignores; setting one leaves the decoded
    # content (and so its hash and size) unchanged, and only the "re-encodes
    # identically" rule refuses it.
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    data_end = len(encoded.rstrip("="))
    loose_bits = encoded[:data_end - 1] + alphabet[alphabet.index(encoded[data_end - 1]) | 1] + encoded[data_end:]
    # One byte longer, and still the JSON lines of CRAWLER-RESULT-10 with its
    # summary restated, so only the size bound can refuse it.
    longer_rows = [list(row) for row in SOURCE_ROWS]
    longer_rows[0][0] += "x"
    longer = _content_lines(SOURCE_HEADER, longer_rows)
    if len(longer) != len(content) + 1:
        raise RuntimeError("SOURCE_ROWS no longer normalise to SOURCE's content")
    fits = docs.default_limits()
    fits["max_normalized_bytes"] = len(content)
    _lies(ctx, [
        ("receipt normalized_content_sha256", _patch(((R, "normalized_content_sha256"), WRONG_DIGEST))),
        ("observation normalized_content_sha256", _patch(((O, "normalized_content_sha256"), WRONG_DIGEST))),
        ("normalized_size_bytes + 1", _patch(((R, "normalized_size_bytes"), len(content) + 1))),
        ("base64 without padding", _patch((("normalized_content",), encoded.rstrip("=")))),
        ("base64 wrapped at 76 columns", _patch((("normalized_content",), wrapped))),
        ("URL-safe base64", _patch((("normalized_content",), base64.urlsafe_b64encode(content).decode("ascii")))),
        ("base64 with padding bits set", _patch((("normalized_content",), loose_bits))),
        ("normalized_media_type", _patch(((R, "normalized_media_type"), "application/jsonl"))),
        ("normalized_data_format", _patch(((R, "normalized_data_format"), "jsonl"))),
        ("normalized_filename", _patch(((R, "normalized_filename"), "other.csv"))),
    ])
    _lies(ctx, [("one byte over max_normalized_bytes", _consistent(SOURCE_HEADER, longer_rows))], limits=fits)


# ---------------------------------------------------------------- CRAWLER-RESULT-6, -7

@check("result.time", clauses=["CRAWLER-RESULT-6"], level="MUST",
       title="acquired_at and observed_at are the request's requested_at, as the same string",
       fakes="the honest result with acquired_at or observed_at one second later, the same instant "
             "spelt with a fraction (.0Z), or the time of the run",
       expected="each: CRAWLER_CHILD_INVALID bundle, exit 0, no result PUT")
def _(ctx):
    requested_at = docs.make_request("https://x.test/", WRONG_DIGEST)["requested_at"]
    later = docs.utc_text(calendar.timegm(time.strptime(requested_at, "%Y-%m-%dT%H:%M:%SZ")) + 1)
    now = docs.utc_text(time.time())
    _lies(ctx, [
        ("acquired_at one second later", _patch(((R, "acquired_at"), later))),
        ("observed_at one second later", _patch(((O, "observed_at"), later))),
        ("acquired_at spelt with a fraction", _patch(((R, "acquired_at"), requested_at[:-1] + ".0Z"))),
        ("both the time of the run", _patch(((R, "acquired_at"), now), ((O, "observed_at"), now))),
    ])


@check("result.limits", clauses=["CRAWLER-RESULT-7"], level="MUST",
       title="row_count, column_names and the digests are well-formed, equal in both documents and within "
             "the request's limits",
       fakes="limits max_rows 3, max_columns 3 (the source's own size); the honest result with row_count, "
             "or row_digest, differing between receipt and observation; and, each with its summary restated "
             "so that only this clause refuses it, a content of four rows, of four columns, with an empty "
             "column name, with no column (a row_count of true, or a digest in another spelling, is also "
             "not what the content gives, so CRAWLER-RESULT-10 refuses it too: not a variant here)",
       expected="each: CRAWLER_CHILD_INVALID bundle, exit 0, no result PUT")
def _(ctx):
    limits = docs.default_limits()
    limits.update(max_rows=3, max_columns=3)
    _content(limits)
    _lies(ctx, [
        ("row_count differs between documents", _patch(((O, "row_count"), 2))),
        ("row_digest differs between documents", _patch(((O, "row_digest"), WRONG_DIGEST))),
        ("four rows, above max_rows", _consistent(SOURCE_HEADER, SOURCE_ROWS + [["Bergen", "7", "2024-01-05"]])),
        ("four columns, above max_columns", _consistent(SOURCE_HEADER + ["note"],
                                                         [row + [""] for row in SOURCE_ROWS])),
        ("an empty column name", _consistent(["city", "", "observed"], SOURCE_ROWS)),
        ("no column", _consistent([], [])),
    ], limits=limits)


# ---------------------------------------------------------------- CRAWLER-RESULT-10

@check("result.content", clauses=["CRAWLER-RESULT-10"], level="MUST",
       title="the content is the header line and canonical row lines, and row_count, column_names, row_digest "
             "and parsed_schema_digest are read off it",
       fakes="the honest result with: row_count one more than the row lines; column_names other than the "
             "header line; row_digest over the whole content; parsed_schema_digest for data_format jsonl; "
             "and, with hash, size and digests restated for the new bytes: a row line with a space after a "
             "comma, a row of two values, a row holding an array, the last line without its \\n",
       expected="each: CRAWLER_CHILD_INVALID bundle, exit 0, no result PUT")
def _(ctx):
    content = _content()
    rows = [docs.canonical(row) + b"\n" for row in SOURCE_ROWS]
    header_line = docs.canonical(SOURCE_HEADER) + b"\n"
    spaced = header_line + rows[0].replace(b",", b", ", 1) + b"".join(rows[1:])
    short_row = _content_lines(SOURCE_HEADER, [SOURCE_ROWS[0][:2]] + SOURCE_ROWS[1:])
    nested = _content_lines(SOURCE_HEADER, [[SOURCE_ROWS[0][0], [SOURCE_ROWS[0][1]], SOURCE_ROWS[0][2]]]
                            + SOURCE_ROWS[1:])
    renamed = ["city", "temp_c", "when"]
    _lies(ctx, [
        ("row_count one more than the row lines", _both("row_count", len(SOURCE_ROWS) + 1)),
        ("column_names other than the header line", _patch(
            ((R, "column_names"), renamed),
            ((R, "parsed_schema_digest"), docs.digest({"column_names": renamed, "data_format": "csv"})))),
        ("row_digest over the whole content", _both("row_digest", hashlib.sha256(content).hexdigest())),
        ("parsed_schema_digest for jsonl", _patch(((R, "parsed_schema_digest"), docs.digest(
            {"column_names": SOURCE_HEADER, "data_format": "jsonl"})))),
        ("a row line that is not canonical", _restated(spaced)),
        ("a row of two values", _restated(short_row)),
        ("a row holding an array", _restated(nested)),
        ("the last line without its \\n", _restated(content[:-1], row_count=len(SOURCE_ROWS))),
    ])


# ---------------------------------------------------------------- CRAWLER-RESULT-8, -9

@check("result.clean-room", clauses=["CRAWLER-RESULT-8"], level="MUST",
       title="clean_room is exactly the claim of the sandbox the node installed",
       fakes="the honest result with clean_room: no_new_privs false, an extra key, a key missing, "
             "the other platform, parser_network_syscalls \"allowed\", null",
       expected="each: CRAWLER_CHILD_INVALID bundle, exit 0, no result PUT")
def _(ctx):
    other = "linux-arm64" if platform.machine().lower() in ("x86_64", "amd64") else "linux-amd64"
    _lies(ctx, [
        ("no_new_privs false", _patch(((R, "clean_room", "no_new_privs"), False))),
        ("an extra key", {"add": [[[R, "clean_room", "seccomp"], "strict"]]}),
        ("parser_process_creation missing", _patch(((R, "clean_room", "parser_process_creation"), DELETE))),
        ("host_platform %s" % other, _patch(((R, "clean_room", "host_platform"), other))),
        ("parser_network_syscalls allowed", _patch(((R, "clean_room", "parser_network_syscalls"), "allowed"))),
        ("clean_room null", _patch(((R, "clean_room"), None))),
    ])


@check("result.reader-watermark", clauses=["CRAWLER-RESULT-9"], level="MUST",
       title="the Reader fields are null, decode_flags [] and next_watermark null",
       fakes="the honest result with one of family_id, family_version, decode_options_digest, "
             "resource_caps, reader_budgets set; decode_flags [\"x\"] or null; next_watermark a string",
       expected="each: CRAWLER_CHILD_INVALID bundle, exit 0, no result PUT")
def _(ctx):
    _lies(ctx, [
        ("family_id", _patch(((R, "family_id"), "csv.v1"))),
        ("family_version", _patch(((R, "family_version"), "1"))),
        ("decode_options_digest", _patch(((R, "decode_options_digest"), WRONG_DIGEST))),
        ("resource_caps", _patch(((R, "resource_caps"), {}))),
        ("reader_budgets", _patch(((R, "reader_budgets"), {}))),
        ("decode_flags [\"x\"]", _patch(((R, "decode_flags"), ["x"]))),
        ("decode_flags null", _patch(((R, "decode_flags"), None))),
        ("next_watermark", _patch((("next_watermark",), "2026-11-30T08:00:00Z"))),
    ])
