"""Bootstrap redemption: one POST, never retried, a bounded answer, a strict parse.

CRAWLER-BOOT-1 fixes the :redeem request; CRAWLER-BOOT-2 makes it a single
attempt whose every failure (a transport error, the deadline, a status other
than 200, a redirect, an empty body) is CRAWLER_BOOTSTRAP_REDEMPTION_FAILED;
CRAWLER-BOOT-3 bounds the answer (CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE);
CRAWLER-BOOT-4 and BOOT-5 parse it strictly, the crawl request included, so
an unknown adapter is refused before any fetch (D5). The three codes are
reported on :fail, so every check here also asserts the one :fail report
carrying its code, and that nothing was fetched or PUT.

The broker fake redeems once (a second :redeem gets 409), and serialises the
bootstrap with plain json.dumps (spaces after separators): every successful
run is also a test that the node parses leniently.
"""

import json

from conformance.checks import check
from conformance.checks.crawler._common import (
    DEADLINE_SLACK_S, ENDLESS_BYTES, SESSION_ID, SHORT_DEADLINE_S, SOCKET_SLACK_BYTES, docs,
    each_variant, expect_outcome, expect_success, expect_untouched, faults, run_variants)
from conformance.planes.crawler import BROKER_PATH, EXECUTION

REDEMPTION_FAILED = "CRAWLER_BOOTSTRAP_REDEMPTION_FAILED"
RESPONSE_INVALID = "CRAWLER_BOOTSTRAP_RESPONSE_INVALID"
TOO_LARGE = "CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE"

# The bootstrap timeout given to the node when a check waits for the :redeem
# deadline, and how long the whole run may take (identity, :redeem, :fail).
REDEEM_DEADLINE_S = SHORT_DEADLINE_S
REDEEM_RUN_BOUND_S = REDEEM_DEADLINE_S + DEADLINE_SLACK_S
# A dripping broker: one byte every quarter second, so the answer would take
# many minutes and only an elapsed deadline ends the exchange (D9).
DRIBBLE_CHUNK_BYTES = 1
DRIBBLE_INTERVAL_S = 0.25
# Retry-After offered with a refusal, to tempt a retry.
RETRY_AFTER_S = 1

# A second canonical UUID: a session that is not the argv session.
OTHER_SESSION_ID = "0c9a6e55-2f1b-4d7e-8a3c-5e4f6b7d8c91"

_DELETE = object()


def _raw(doc):
    """The bootstrap as the broker fake serialises it (json.dumps, spaces)."""
    return json.dumps(doc).encode("utf-8")


def _padded_to(size):
    """bootstrap_raw: the document followed by spaces up to exactly size bytes."""
    def build(doc):
        raw = _raw(doc)
        if len(raw) > size:
            raise ValueError("the bootstrap is already %d bytes" % len(raw))
        return raw + b" " * (size - len(raw))
    return build


def _replaced(old, new):
    """bootstrap_raw: the serialised document with `old` replaced by `new` once."""
    def build(doc):
        raw = _raw(doc)
        if old not in raw:
            raise ValueError("%r not in the bootstrap" % old)
        return raw.replace(old, new, 1)
    return build


def _deeply_nested(doc):
    """The document with an extra key nested as deep as the bound allows."""
    raw = _raw(doc)
    room = docs.MAX_BOOTSTRAP_RESPONSE_BYTES - len(raw) - len(b', "deep": ')
    depth = room // 2
    return raw[:-1] + b', "deep": ' + b"[" * depth + b"]" * depth + b"}"


def _with_request(*changes):
    """request_patch setting (path, value) pairs; value _DELETE removes the key."""
    def patch(request):
        for path, value in changes:
            node = request
            for key in path[:-1]:
                node = node[key]
            if value is _DELETE:
                del node[path[-1]]
            else:
                node[path[-1]] = value
        return request
    return patch


def _on_redeem(fault):
    """An arrangement: fault on every :redeem."""
    return lambda plane: plane.broker.add_fault(fault, plane.broker.redeem_match())


def _body_held(plane):
    """An arrangement: the :redeem answer's headers go out, its body never does."""
    plane.broker.add_fault(faults.stall(after_bytes=0), plane.broker.redeem_match(phase="response"))


def _undeclared(extra_bytes):
    """An arrangement: the :redeem answer without Content-Length, extra_bytes longer."""
    return _on_redeem(faults.oversize(extra_bytes, content_length="absent"))


def _expect_reported_on_fail(ctx, plane, code, label=None):
    """The status line names code; the one :fail carries it; no :redeem retry; nothing fetched or PUT."""
    where = " (variant %s)" % label if label else ""
    expect_outcome(ctx, plane, code, "failed", 1, label)
    redeems, fails = plane.broker.redeems(), plane.broker.fails()
    ctx.expect(len(redeems) == 1, expected="exactly one :redeem%s" % where, actual="%d :redeem" % len(redeems),
               diagnosis="the redemption is single-use: it is sent once and never retried (CRAWLER-BOOT-2)")
    body = docs.canonical({"failure_code": code})
    ctx.expect(len(fails) == 1 and fails[0].body == body,
               expected="one :fail with the body %s%s" % (body.decode(), where),
               actual=lambda: "%d :fail; bodies %s" % (len(fails), [f.body[:200] for f in fails]),
               diagnosis="%s is reported on :fail (CRAWLER-REPORT-1)" % code)
    expect_untouched(ctx, plane, ("source", "put", "tripwire"), label)


@check("boot.request-shape", clauses=["CRAWLER-BOOT-1"], level="MUST",
       title="the :redeem request: POST <url base>/<sid>:redeem, no body, Accept, Authorization, execution header",
       fakes="a healthy plane; the broker records the request as sent",
       expected="one POST to <url base path>/<sid>:redeem without query, Content-Length: 0 and no body; "
                "Accept: application/json; Authorization: Bearer <token #1>; X-Mostlyright-Cloud-Run-Execution: "
                "the execution; the run succeeds")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    # Act
    plane.run()
    # Assert
    expect_success(ctx, plane)
    redeems = plane.broker.redeems()
    ctx.expect(len(redeems) == 1, expected="one :redeem", actual="%d" % len(redeems),
               diagnosis="the redemption is single-use: send :redeem exactly once per run")
    call = redeems[0]
    want_path = "%s/%s:redeem" % (BROKER_PATH, plane.session_id)
    ctx.expect(call.exchange.method == "POST" and call.raw_path == want_path and not call.has_query,
               expected="POST %s (no query)" % want_path,
               actual="%s %s%s" % (call.exchange.method, call.raw_path, " with a query" if call.has_query else ""),
               diagnosis="POST to the url base's path plus /<session id>:redeem, exactly, with no query")
    ctx.expect(call.content_length == 0 and not call.chunked and call.body == b"",
               expected="Content-Length: 0 and no body",
               actual="Content-Length %r, chunked %s, %d body bytes" % (call.content_length, call.chunked,
                                                                       len(call.body)),
               diagnosis="send :redeem with Content-Length: 0 and no body (not chunked)")
    ctx.expect(call.header_all("accept") == ["application/json"], expected="Accept: application/json",
               actual="Accept %s" % call.header_all("accept"),
               diagnosis="send exactly one Accept: application/json header on :redeem")
    tokens = plane.metadata.tokens()
    authorization = call.header_all("authorization")
    ctx.expect(tokens and authorization == ["Bearer " + tokens[0].token] and call.token_seq == 1,
               expected="exactly one Authorization: Bearer <token #1, minted for :redeem>",
               actual=lambda: "%d Authorization header(s); token presented #%s" % (len(authorization), call.token_seq),
               diagnosis="the token minted for the :redeem audience goes, whole, in one Authorization header")
    ctx.expect(call.header_all("x-mostlyright-cloud-run-execution") == [EXECUTION],
               expected="X-Mostlyright-Cloud-Run-Execution: %s" % EXECUTION,
               actual="%s" % call.header_all("x-mostlyright-cloud-run-execution"),
               diagnosis="send X-Mostlyright-Cloud-Run-Execution with the value of CLOUD_RUN_EXECUTION, once")


@check("boot.single-attempt", clauses=["CRAWLER-BOOT-2"], level="MUST",
       title="a refused or broken :redeem is sent once, never retried, and reported on :fail",
       fakes=":redeem answers 500, 503 with Retry-After, 429 with Retry-After, 201 with a valid bootstrap, or "
             "resets the connection (one per run)",
       expected="CRAWLER_BOOTSTRAP_REDEMPTION_FAILED failed, exit 1; exactly one :redeem; one :fail with that code; "
                "no fetch, no PUT")
def _(ctx):
    def act(label, arrange):
        # Arrange
        plane = ctx.plane()
        arrange(plane)
        # Act
        plane.run()
        # Assert
        _expect_reported_on_fail(ctx, plane, REDEMPTION_FAILED, label)
        return plane

    def answer(status, with_bootstrap=False):
        def arrange(plane):
            plane.broker.redeem_status = status
            plane.broker.redeem_body = plane.broker.bootstrap() if with_bootstrap else b""
        return arrange

    run_variants(ctx, [
        ("500", answer(500)),
        ("503 with Retry-After", _on_redeem(faults.status(503, retry_after_s=RETRY_AFTER_S))),
        ("429 with Retry-After", _on_redeem(faults.status(429, retry_after_s=RETRY_AFTER_S))),
        ("201 with a valid bootstrap", answer(201, with_bootstrap=True)),
        ("connection reset", _on_redeem(faults.reset(after_bytes=0))),
    ], act)


@check("boot.redirect", clauses=["CRAWLER-BOOT-2"], level="MUST",
       title="a redirect answering :redeem is never followed",
       fakes=":redeem answers 301, 302, 303, 307, then 308 (one per run), to the same path on the tripwire "
             "(urllib replays a 301-303 as a GET carrying the Authorization header)",
       expected="CRAWLER_BOOTSTRAP_REDEMPTION_FAILED failed, exit 1; no tripwire connection; one :fail")
def _(ctx):
    def act(label, code):
        # Arrange
        plane = ctx.plane()
        target = plane.tripwire.url("%s/%s:redeem" % (BROKER_PATH, plane.session_id))
        plane.broker.add_fault(faults.redirect(target, code=code), plane.broker.redeem_match())
        # Act
        plane.run()
        # Assert
        _expect_reported_on_fail(ctx, plane, REDEMPTION_FAILED, label)
        return plane

    run_variants(ctx, [(str(code), code) for code in (301, 302, 303, 307, 308)], act)


@check("boot.empty-body", clauses=["CRAWLER-BOOT-2"], level="MUST",
       title="a 200 with an empty body is a failed redemption",
       fakes=":redeem answers 200 with Content-Length: 0",
       expected="CRAWLER_BOOTSTRAP_REDEMPTION_FAILED failed, exit 1; one :fail with that code")
def _(ctx):
    # Arrange
    plane = ctx.plane(redeem_status=200, redeem_body=b"")
    # Act
    plane.run()
    # Assert
    _expect_reported_on_fail(ctx, plane, REDEMPTION_FAILED)


@check("boot.deadline", clauses=["CRAWLER-BOOT-2", "CRAWLER-CONFIG-6"], level="MUST",
       title="a :redeem that never answers, or drips, ends at the bootstrap timeout",
       fakes="bootstrap timeout 2 s; :redeem is accepted and never answered; then its answer drips one byte every "
             "0.25 s (one per run)",
       expected="CRAWLER_BOOTSTRAP_REDEMPTION_FAILED failed, exit 1, within 2 s + 4 s slack; one :redeem; one :fail")
def _(ctx):
    def act(label, fault):
        # Arrange
        plane = ctx.plane(timeouts={"bootstrap": REDEEM_DEADLINE_S})
        plane.broker.add_fault(fault, plane.broker.redeem_match())
        # Act
        plane.run()
        # Assert
        _expect_reported_on_fail(ctx, plane, REDEMPTION_FAILED, label)
        wall = plane.result.wall_s
        ctx.expect(wall <= REDEEM_RUN_BOUND_S,
                   expected="exit within %.0f s (bootstrap timeout %.0f s; variant %s)"
                            % (REDEEM_RUN_BOUND_S, REDEEM_DEADLINE_S, label),
                   actual="exit after %.1f s" % wall,
                   diagnosis="the bootstrap timeout bounds the whole :redeem exchange as an elapsed deadline")
        return plane

    run_variants(ctx, [("never answered", faults.hang()),
                       ("dripped", faults.dribble(DRIBBLE_CHUNK_BYTES, DRIBBLE_INTERVAL_S))], act)


@check("boot.oversize", clauses=["CRAWLER-BOOT-3"], level="MUST",
       title="the :redeem answer is bounded at MAX_BOOTSTRAP_RESPONSE_BYTES (114688), declared or read",
       fakes=":redeem answers (1) Content-Length bound + 1 and then no body; (2) bound + 1 bytes with "
             "Content-Length; (3) bound + 1 bytes without it; (4) 64 MiB without it; then a bootstrap padded with "
             "spaces to exactly the bound, with and without Content-Length (one per run)",
       expected="(1)-(4) CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE failed, exit 1, one :fail with that code, no fetch; "
                "(4) the node stopped reading long before the end; the padded bootstraps are accepted")
def _(ctx):
    bound = docs.MAX_BOOTSTRAP_RESPONSE_BYTES  # read now: MAX_CRAWLER_REQUEST_BYTES is a deployment constant

    def too_large(label, value):
        options, arrange = value
        # Arrange
        plane = ctx.plane(**options)
        if arrange is not None:
            arrange(plane)
        # Act
        plane.run()
        # Assert
        _expect_reported_on_fail(ctx, plane, TOO_LARGE, label)
        return plane

    # (1) Declared over the bound, body never sent: only a refusal on the
    # header gives TOO_LARGE; a node that waits for the body meets the deadline.
    ctx.note("variant: declared %d, body held" % (bound + 1))
    too_large("declared %d, body held" % (bound + 1),
              ({"redeem_status": 200, "redeem_body": b" " * (bound + 1),
                "timeouts": {"bootstrap": REDEEM_DEADLINE_S}}, _body_held))
    run_variants(ctx, [
        ("%d bytes with Content-Length" % (bound + 1), ({"bootstrap_raw": _padded_to(bound + 1)}, None)),
        ("%d bytes without Content-Length" % (bound + 1), ({"bootstrap_raw": _padded_to(bound)}, _undeclared(1))),
    ], too_large)
    ctx.note("variant: %d MiB without Content-Length" % (ENDLESS_BYTES >> 20))
    plane = too_large("endless", ({}, _undeclared(ENDLESS_BYTES)))
    answer = plane.broker.redeems()[0].exchange
    ctx.note("the broker fake sent %d body bytes (outcome %s)" % (answer.resp_bytes, answer.outcome))
    ctx.expect(answer.outcome != "ok" and answer.resp_bytes <= bound + SOCKET_SLACK_BYTES,
               expected="the node stops reading after %d + 1 bytes" % bound,
               actual="the broker fake sent the whole %d-byte answer (%d bytes)" % (ENDLESS_BYTES, answer.resp_bytes),
               diagnosis="read at most the bound plus one byte (CRAWLER-BOOT-3)")

    def accepted(label, value):
        options, arrange = value
        # Arrange
        plane = ctx.plane(**options)
        if arrange is not None:
            arrange(plane)
        # Act
        plane.run()
        # Assert
        ctx.expect(plane.status_line() is None, expected="a %d-byte bootstrap accepted (variant %s)" % (bound, label),
                   actual=lambda: "status line %s/%s" % plane.status_line(),
                   diagnosis="exactly MAX_BOOTSTRAP_RESPONSE_BYTES is within the bound")
        expect_success(ctx, plane)
        return plane

    run_variants(ctx, [
        ("exactly %d bytes with Content-Length (accepted)" % bound, ({"bootstrap_raw": _padded_to(bound)}, None)),
        ("exactly %d bytes without Content-Length (accepted)" % bound,
         ({"bootstrap_raw": _padded_to(bound)}, _undeclared(0))),
    ], accepted)


@check("boot.oversize-any-status", clauses=["CRAWLER-BOOT-3", "CRAWLER-BOOT-2"], level="MUST",
       title="an oversized :redeem answer is too large whatever its status: the size is judged first",
       fakes=":redeem answers 500 with Content-Length and the body held; then 503 without "
             "Content-Length (one per run), MAX_BOOTSTRAP_RESPONSE_BYTES + 1 bytes each",
       expected="each: CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE failed, exit 1, one :fail with that code (the "
                "upstream's code for it), not CRAWLER_BOOTSTRAP_REDEMPTION_FAILED")
def _(ctx):
    bound = docs.MAX_BOOTSTRAP_RESPONSE_BYTES  # read now: MAX_CRAWLER_REQUEST_BYTES is a deployment constant

    def act(label, value):
        options, arrange = value
        # Arrange
        plane = ctx.plane(**options)
        arrange(plane)
        # Act
        plane.run()
        # Assert
        _expect_reported_on_fail(ctx, plane, TOO_LARGE, label)

    each_variant(ctx, [
        ("500, declared %d, body held" % (bound + 1),
         ({"redeem_status": 500, "redeem_body": b" " * (bound + 1), "timeouts": {"bootstrap": REDEEM_DEADLINE_S}},
          _body_held)),
        ("503, %d bytes without Content-Length" % (bound + 1),
         ({"redeem_status": 503, "redeem_body": b" " * bound}, _undeclared(1))),
    ], act)


@check("boot.strict-response", clauses=["CRAWLER-BOOT-4"], level="MUST",
       title="the bootstrap answer is parsed strictly: exact keys, schema, session, and the lenient parser's rules",
       fakes=":redeem answers a bootstrap with an extra key, without schema_version, of schema v2, for the "
             "uppercase or another session; or text that is not JSON, invalid UTF-8, has a BOM, a lone surrogate, "
             "is an array, has a duplicate key, a float, NaN, text after the document, or nesting tens of "
             "thousands deep within the bound (one per run)",
       expected="CRAWLER_BOOTSTRAP_RESPONSE_INVALID failed, exit 1; one :fail with that code; no fetch, no PUT")
def _(ctx):
    def patch(**fields):
        def apply(doc):
            for key, value in fields.items():
                if value is _DELETE:
                    del doc[key]
                else:
                    doc[key] = value
            return doc
        return {"bootstrap_patch": apply}

    def act(label, options):
        # Arrange
        plane = ctx.plane(**options)
        # Act
        plane.run()
        # Assert
        _expect_reported_on_fail(ctx, plane, RESPONSE_INVALID, label)
        return plane

    run_variants(ctx, [
        ("extra key", patch(extra=1)),
        ("schema_version missing", patch(schema_version=_DELETE)),
        ("schema v2", patch(schema_version="mostlyright-crawler-bootstrap.v2")),
        ("session id uppercase", patch(crawler_session_id=SESSION_ID.upper())),
        ("another session", patch(crawler_session_id=OTHER_SESSION_ID)),
        ("not JSON", {"bootstrap_raw": b"<html><body>upstream error</body></html>"}),
        ("invalid UTF-8", {"bootstrap_raw": _replaced(b'"data.csv"', b'"data\xff.csv"')}),
        ("a BOM", {"bootstrap_raw": lambda doc: b"\xef\xbb\xbf" + _raw(doc)}),
        ("a lone surrogate escape", {"bootstrap_raw": _replaced(b'"data.csv"', b'"data\\ud800.csv"')}),
        ("an array", {"bootstrap_raw": lambda doc: b"[" + _raw(doc) + b"]"}),
        ("duplicate key", {"bootstrap_raw": lambda doc: b'{"schema_version": "%s", ' % docs.BOOTSTRAP_SCHEMA.encode()
                           + _raw(doc)[1:]}),
        ("a float", {"bootstrap_raw": _replaced(b'"max_rows": 1000000', b'"max_rows": 1000000.0')}),
        ("NaN", {"bootstrap_raw": _replaced(b'"max_rows": 1000000', b'"max_rows": NaN')}),
        ("text after the document", {"bootstrap_raw": lambda doc: _raw(doc) + b" x"}),
        ("deep nesting within the bound", {"bootstrap_raw": _deeply_nested}),
    ], act)


@check("boot.strict-request", clauses=["CRAWLER-BOOT-5"], level="MUST",
       title="the crawl request is public.https 1.0.0 without a Reader, every field it reads in shape, refused "
             "before any fetch",
       fakes="the bootstrap's request names adapter external.openligadb or version 1.0.1 (D5), carries a "
             "reader_pin (D22), a missing key, limits that are not an object, max_rows "
             "true / -1 / \"1000\", max_source_bytes 0 / above 2^32, max_normalized_bytes above the result bound, "
             "max_columns 0, data_format xml, another schema, a bad source_id, requested_at, attestation, url "
             "or filename (one per run); the capability is signed for that very request; then a request with "
             "every bound at its maximum (max_rows and max_columns 2^53 - 1, D27)",
       expected="CRAWLER_BOOTSTRAP_RESPONSE_INVALID failed, exit 1; one :fail with that code; no source request, "
                "no PUT; the request at the maximum bounds runs to success")
def _(ctx):
    def act(label, changes):
        # Arrange
        plane = ctx.plane(request_patch=_with_request(*changes))
        # Act
        plane.run()
        # Assert
        _expect_reported_on_fail(ctx, plane, RESPONSE_INVALID, label)
        return plane

    limits = ("query", "limits")
    run_variants(ctx, [
        ("adapter external.openligadb", [(("adapter_id",), "external.openligadb")]),
        ("adapter version 1.0.1", [(("adapter_version",), "1.0.1")]),
        ("query.reader_pin set", [(("query", "reader_pin"), {"family_id": "csv", "family_version": "1",
                                                            "decode_options": {}})]),
        ("schema v2", [(("schema_version",), "mostlyright-crawler-request.v2")]),
        ("requested_at missing", [(("requested_at",), _DELETE)]),
        ("limits not an object", [(limits, [1, 2, 3, 4])]),
        ("max_rows true", [(limits + ("max_rows",), True)]),
        ("max_rows -1", [(limits + ("max_rows",), -1)]),
        ("max_rows \"1000\"", [(limits + ("max_rows",), "1000")]),
        ("max_source_bytes 0", [(limits + ("max_source_bytes",), 0)]),
        ("max_source_bytes 2^32 + 1", [(limits + ("max_source_bytes",), 4294967297)]),
        ("max_normalized_bytes MAX_CRAWLER_RESULT_BYTES + 1",
         [(limits + ("max_normalized_bytes",), docs.MAX_CRAWLER_RESULT_BYTES + 1)]),
        ("max_columns 0", [(limits + ("max_columns",), 0)]),
        ("data_format xml", [(("query", "data_format"), "xml")]),
        ("source_id uppercase", [(("source_id",), "Conformance-Source")]),
        ("source_id of 129 characters", [(("source_id",), "s" * 129)]),
        ("requested_at with +00:00", [(("requested_at",), "2026-11-30T08:00:00+00:00")]),
        ("requested_at on February 30", [(("requested_at",), "2026-02-30T08:00:00Z")]),
        ("attestation in uppercase hex", [(("egress_policy_attestation",), "A" * 64)]),
        ("url of 2049 characters", [(("query", "url"), "https://localhost/" + "u" * 2031)]),
        ("filename with '/'", [(("query", "filename"), "dir/data.csv")]),
        ("filename of 256 characters", [(("query", "filename"), "f" * 252 + ".csv")]),
    ], act)

    # The bounds themselves are valid: every limit at its maximum, the
    # longest source_id, and a filename of 255 characters (510 UTF-8 bytes).
    ctx.note("variant: every bound at its maximum (accepted)")
    plane = ctx.plane(request_patch=_with_request(
        (limits + ("max_source_bytes",), 4294967296),
        (limits + ("max_normalized_bytes",), docs.MAX_CRAWLER_RESULT_BYTES),
        (limits + ("max_rows",), 2 ** 53 - 1),  # D27: the counts bound nothing the node holds
        (limits + ("max_columns",), 2 ** 53 - 1),
        (("source_id",), "s" * 128),
        (("query", "filename"), "\u00e9" * 251 + ".csv"),
    ))
    plane.run()
    ctx.expect(plane.status_line() is None, expected="a request with every bound at its maximum accepted",
               actual=lambda: "status line %s/%s" % plane.status_line(),
               diagnosis="the bounds are inclusive, and a filename's length counts characters, not bytes")
    expect_success(ctx, plane)


@check("boot.tls-verified", clauses=["CRAWLER-BOOT-1"], level="MUST",
       title="the token goes only to a broker whose certificate verifies",
       fakes="the broker serves a self-signed certificate for its own name, trusted by nobody",
       expected="CRAWLER_BOOTSTRAP_REDEMPTION_FAILED, failed, exit 1; the broker never receives a request "
                "(neither :redeem nor :fail), so no token reaches it")
def _(ctx):
    # Arrange
    plane = ctx.plane(untrusted=("broker",))
    # Act
    plane.run()
    # Assert
    expect_outcome(ctx, plane, "CRAWLER_BOOTSTRAP_REDEMPTION_FAILED", "failed", 1)
    expect_untouched(ctx, plane, ("redeem", "fail", "source", "put"))


@check("boot.tls-hostname", clauses=["CRAWLER-BOOT-1"], level="MUST",
       title="the token goes only to a broker whose certificate names the broker's host",
       fakes="the broker serves a certificate whose chain the node trusts but which names only "
             "misnamed.invalid",
       expected="CRAWLER_BOOTSTRAP_REDEMPTION_FAILED, failed, exit 1; the broker never receives a request "
                "(a verified chain is not enough: the name must match too)")
def _(ctx):
    # Arrange
    plane = ctx.plane(misnamed=("broker",))
    # Act
    plane.run()
    # Assert
    expect_outcome(ctx, plane, "CRAWLER_BOOTSTRAP_REDEMPTION_FAILED", "failed", 1)
    expect_untouched(ctx, plane, ("redeem", "fail", "source", "put"))
