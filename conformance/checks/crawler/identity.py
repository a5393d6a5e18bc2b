"""The identity token: one metadata request per broker call, accepted only as a compact JWS.

CRAWLER-IDENTITY-1 fixes the metadata request byte for byte (path, query as
`urlencode` writes it, `Metadata-Flavor: Google`, no body, no Authorization);
CRAWLER-IDENTITY-2 asks for a fresh token, with that route's audience, before
each broker call; CRAWLER-IDENTITY-3 accepts only a 200 whose body is a compact
JWS and turns everything else (a bad status or body, a redirect, a transport
error, the deadline) into CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE, stderr-only;
CRAWLER-IDENTITY-4 bounds the read (D4: too large is the same code, not a
bootstrap failure on :fail).

The metadata fake mints a real-looking token per request, records the audience
it was minted for, and the broker records which token each call presented, so
"which token went where" is read from the fakes, never inferred.
"""

import urllib.parse

from conformance.checks import check
from conformance.checks.crawler._common import (
    DEADLINE_SLACK_S, ENDLESS_BYTES, SHORT_DEADLINE_S, SOCKET_SLACK_BYTES, expect_outcome, expect_success,
    expect_untouched, faults)
from conformance.checks.crawler._common import run_variants
from conformance.planes.metadata import IDENTITY_PATH

UNAVAILABLE = "CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE"

# CRAWLER-IDENTITY-3: a segment has at most 8192 characters.
MAX_SEGMENT_CHARS = 8192
# CRAWLER-IDENTITY-4: the metadata answer's bound.
MAX_METADATA_IDENTITY_TOKEN_BYTES = 16384

# A declared answer this long is refused before its body is read (IDENTITY-4).
DECLARED_TOO_LONG_BYTES = 20000

# The bootstrap timeout given to the node when a check waits for the
# identity deadline, and how long the run may take in all (start-up and the
# status line on top of the deadline).
IDENTITY_DEADLINE_S = SHORT_DEADLINE_S
IDENTITY_RUN_BOUND_S = IDENTITY_DEADLINE_S + DEADLINE_SLACK_S
# How a dribbling metadata server drips its answer: slow enough that the whole
# answer would take minutes, so only an elapsed deadline ends the exchange (D9).
DRIBBLE_CHUNK_BYTES = 1
DRIBBLE_INTERVAL_S = 0.25

# When the metadata answer declares more than the bound and then sends no
# body, the node must refuse on the header: its run must end this soon after
# the answer's headers went out. The bootstrap timeout given to the node is
# longer, so a node that waits for the body runs into it instead.
UNREAD_REFUSAL_BUDGET_S = 3.5
UNREAD_BOOTSTRAP_TIMEOUT_S = 6.0


def _segment(chars):
    return "A" * chars


# Answers CRAWLER-IDENTITY-3 refuses: (label, plane options). Statuses other
# than 200 carry a good token, so a node that ignores the status would redeem.
MALFORMED_ANSWERS = [
    ("status 404 with a token", {"identity_status": 404}),
    ("status 500 with a token", {"identity_status": 500}),
    ("status 201 with a token", {"identity_status": 201}),
    ("not a JWT", {"identity_body": "not-a-jwt"}),
    ("token followed by a newline", {"identity_body": "newline"}),
    ("four segments", {"identity_body": "four-segments"}),
    ("'=' padding", {"identity_body": "padded"}),
    ("empty body", {"identity_body": "empty"}),
    ("leading space", {"identity_body": "spaces"}),
    ("standard base64 '+' and '/'", {"identity_body": lambda token: token[:-2] + b"+/"}),
    ("a segment of 8193 characters",
     {"identity_body": lambda token: (_segment(MAX_SEGMENT_CHARS + 1) + ".e30.c2ln").encode("ascii")}),
    ("an empty segment", {"identity_body": lambda token: token.split(b".")[0] + b"..c2ln"}),
]


def _identity_exchanges(plane):
    return list(plane.metadata.transcript)


def _expect_unavailable(ctx, plane, label=None):
    """IDENTITY-3: UNAVAILABLE, stderr-only: no :redeem, no :fail (and nothing after them)."""
    expect_outcome(ctx, plane, UNAVAILABLE, "failed", 1, label)
    expect_untouched(ctx, plane, ("redeem", "fail", "source", "put", "tripwire"), label)


@check("identity.request-shape", clauses=["CRAWLER-IDENTITY-1"], level="MUST",
       title="the metadata request: GET the identity path, audience urlencoded, format=full, Metadata-Flavor",
       fakes="a healthy plane; the metadata fake records each request as sent",
       expected="the first request of the run is `GET <identity path>?audience=<urlencoded <audience base>/<sid>"
                ":redeem>&format=full` over plain HTTP with Metadata-Flavor: Google, no Authorization and no "
                "body, before :redeem; the run succeeds")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    # Act
    plane.run()
    # Assert
    expect_success(ctx, plane)
    exchanges = _identity_exchanges(plane)
    requests = plane.metadata.requests()
    ctx.expect(exchanges and requests, expected="a request to the metadata server",
               actual=plane.describe_exchanges(),
               diagnosis="ask the metadata server for an identity token before :redeem")
    first_ex, first = exchanges[0], requests[0]
    ctx.expect(first_ex.method == "GET" and first_ex.path.split("?", 1)[0] == IDENTITY_PATH,
               expected="GET %s" % IDENTITY_PATH, actual="%s %s" % (first_ex.method, first_ex.path.split("?", 1)[0]),
               diagnosis="the token comes from the metadata server's identity path")
    want_query = urllib.parse.urlencode([("audience", plane.broker.audience("redeem")), ("format", "full")])
    ctx.expect(first.raw_query == want_query, expected="query exactly %s" % want_query,
               actual="query %s" % first.raw_query,
               diagnosis="audience first, then format=full, the audience encoded as urlencode() does "
                         "(':' and '/' percent-encoded)")
    ctx.expect(first.flavor == "Google", expected="Metadata-Flavor: Google",
               actual="Metadata-Flavor: %r" % first.flavor,
               diagnosis="send Metadata-Flavor: Google on the identity request: the metadata server refuses a request "
                         "without it")
    ctx.expect(not first.authorization, expected="no Authorization header", actual="an Authorization header",
               diagnosis="the metadata request carries no credential (CRAWLER-IDENTITY-1)")
    framing = [name for name in first.header_names if name.lower() == "transfer-encoding"]
    ctx.expect(first.body_bytes == 0 and not framing, expected="no body",
               actual="%d body bytes; headers %s" % (first.body_bytes, framing),
               diagnosis="send the identity request as a GET with no body and no Transfer-Encoding")
    redeems = plane.broker.redeems()
    broker_first = min([ex.t_start for ex in plane.broker.transcript] or [float("inf")])
    ctx.expect(redeems and first_ex.t_start < broker_first and first.minted is not None
               and redeems[0].token_seq == first.minted.seq,
               expected="the identity request before :redeem, whose token :redeem presents",
               actual=lambda: "identity at %.3f, first broker request at %.3f; :redeem presented token #%s" % (
                   first_ex.t_start, broker_first, redeems[0].token_seq if redeems else None),
               diagnosis="before :redeem, mint its token at the metadata server and present that very token on :redeem")


@check("identity.fresh-per-call", clauses=["CRAWLER-IDENTITY-2"], level="MUST",
       title="a fresh token, minted for its route's audience, before each broker call",
       fakes=":redeem answers 500, so the node reports on :fail; the metadata fake mints one token per request",
       expected="two identity requests: audience <base>/<sid>:redeem, then <base>/<sid>:fail after :redeem; "
                ":redeem presents token 1, :fail token 2")
def _(ctx):
    # Arrange
    plane = ctx.plane(redeem_status=500)
    # Act
    plane.run()
    # Assert
    expect_outcome(ctx, plane, "CRAWLER_BOOTSTRAP_REDEMPTION_FAILED", "failed", 1)
    requests = plane.metadata.requests()
    audiences = [r.audience for r in requests]
    want = [plane.broker.audience("redeem"), plane.broker.audience("fail")]
    ctx.expect(audiences == want, expected="identity requests for the audiences %s, in that order" % want,
               actual="audiences %s" % audiences,
               diagnosis="each broker call mints its own token for exactly its route's audience; none is reused")
    redeems, fails = plane.broker.redeems(), plane.broker.fails()
    ctx.expect(len(redeems) == 1 and len(fails) == 1, expected="one :redeem and one :fail",
               actual="%d :redeem, %d :fail" % (len(redeems), len(fails)),
               diagnosis=":redeem is sent once and, when it fails, :fail once: neither is retried nor skipped")
    ctx.expect(redeems[0].token_seq == requests[0].token_seq == 1,
               expected=":redeem presents token #1 (minted for :redeem)",
               actual=":redeem presented token #%s" % redeems[0].token_seq,
               diagnosis="present on :redeem the token just minted for the :redeem audience")
    ctx.expect(fails[0].token_seq == requests[1].token_seq == 2,
               expected=":fail presents token #2 (minted for :fail)",
               actual=":fail presented token #%s" % fails[0].token_seq,
               diagnosis="a token is never reused: :fail needs its own, minted for the :fail audience")
    second_minted = requests[1].exchange.t_start
    redeem_start = redeems[0].exchange.t_start
    ctx.expect(second_minted > redeem_start, expected="the :fail token minted after :redeem was sent (just before "
                                                      ":fail)",
               actual="minted %.3f s before :redeem" % (redeem_start - second_minted),
               diagnosis="a token is minted just before its call, never ahead or cached")


@check("identity.malformed", clauses=["CRAWLER-IDENTITY-3"], level="MUST",
       title="a metadata answer that is not a 200 with a compact JWS is refused",
       fakes="the metadata server answers 404, 500 or 201 (with a good token), or 200 with a body that is not a "
             "compact JWS: not a JWT, a trailing newline, four segments, '=' padding, empty, a leading space, "
             "standard base64, a segment of 8193 characters, an empty segment (one per run)",
       expected="CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE failed, exit 1; no :redeem, no :fail")
def _(ctx):
    def act(label, options):
        # Arrange
        plane = ctx.plane(**options)
        # Act
        plane.run()
        # Assert
        _expect_unavailable(ctx, plane, label)
        return plane

    run_variants(ctx, MALFORMED_ANSWERS, act)


@check("identity.redirect", clauses=["CRAWLER-IDENTITY-3"], level="MUST",
       title="a redirect from the metadata server is not followed",
       fakes="the metadata server answers 302, then 307 (one per run), to the same path on the tripwire",
       expected="CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE failed, exit 1; no tripwire connection; no :redeem, no :fail")
def _(ctx):
    def act(label, code):
        # Arrange
        plane = ctx.plane()
        target = plane.tripwire.url(IDENTITY_PATH + "?audience=x&format=full", scheme="http")
        plane.metadata.add_fault(faults.redirect(target, code=code), plane.metadata.identity_match())
        # Act
        plane.run()
        # Assert
        _expect_unavailable(ctx, plane, label)
        return plane

    run_variants(ctx, [("302", 302), ("307", 307)], act)


@check("identity.oversize", clauses=["CRAWLER-IDENTITY-4"], level="MUST",
       title="the metadata answer is bounded: refused unread when declared too long, cut at bound + 1 otherwise",
       fakes="the metadata server (1) declares Content-Length 20000 and then sends no body; (2) sends 64 MiB "
             "without Content-Length",
       expected="CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE failed, exit 1 (D4: not a bootstrap failure), no :redeem, "
                "no :fail; (1) within 2 s of the answer's headers; (2) the node stopped reading long before the end")
def _(ctx):
    # (1) Declared too long, body held back: only a node that trusts the
    # header ends promptly; one that reads first waits for its deadline.
    ctx.note("variant: Content-Length %d, body held" % DECLARED_TOO_LONG_BYTES)
    plane = ctx.plane(identity_body=b"A" * DECLARED_TOO_LONG_BYTES,
                      timeouts={"bootstrap": UNREAD_BOOTSTRAP_TIMEOUT_S})
    plane.metadata.add_fault(faults.stall(after_bytes=0), plane.metadata.identity_match())
    plane.run()
    _expect_unavailable(ctx, plane, "declared too long")
    answer = _identity_exchanges(plane)[0]
    latency = plane.result.t_exit - (answer.t_headers_sent or answer.t_start)
    ctx.note("exit %.3f s after the answer's headers" % latency)
    ctx.expect(latency <= UNREAD_REFUSAL_BUDGET_S,
               expected="exit within %.1f s of a Content-Length of %d (refused before reading the body)"
                        % (UNREAD_REFUSAL_BUDGET_S, DECLARED_TOO_LONG_BYTES),
               actual="exit %.2f s after the answer's headers" % latency,
               diagnosis="an answer whose Content-Length exceeds %d is refused before its body is read"
                         % MAX_METADATA_IDENTITY_TOKEN_BYTES)

    # (2) No Content-Length, far more than the bound: the node reads at most
    # bound + 1 bytes and hangs up, so the fake cannot send it all.
    ctx.note("variant: %d MiB without Content-Length" % (ENDLESS_BYTES >> 20))
    plane = ctx.plane()
    endless = faults.oversize(ENDLESS_BYTES, content_length="absent")
    plane.metadata.add_fault(endless, plane.metadata.identity_match())
    plane.run()
    _expect_unavailable(ctx, plane, "endless answer")
    answer = _identity_exchanges(plane)[0]
    ctx.note("the metadata fake sent %d body bytes (outcome %s)" % (answer.resp_bytes, answer.outcome))
    ctx.expect(answer.outcome != "ok" and answer.resp_bytes <= MAX_METADATA_IDENTITY_TOKEN_BYTES + SOCKET_SLACK_BYTES,
               expected="the node stops reading after %d + 1 bytes and closes" % MAX_METADATA_IDENTITY_TOKEN_BYTES,
               actual="the metadata fake sent %d bytes (outcome %s)" % (answer.resp_bytes, answer.outcome),
               diagnosis="the answer was read to its end: read at most the bound plus one byte")


@check("identity.deadline", clauses=["CRAWLER-IDENTITY-3", "CRAWLER-CONFIG-6"], level="MUST",
       title="a metadata server that never answers, or drips, is given up at the bootstrap timeout",
       fakes="bootstrap timeout 2 s; the metadata server accepts the request and never answers; then it drips its "
             "answer one byte every 0.25 s (one per run)",
       expected="CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE failed, exit 1, within 2 s + 4 s slack; no :redeem, no :fail")
def _(ctx):
    def act(label, fault):
        # Arrange
        plane = ctx.plane(timeouts={"bootstrap": IDENTITY_DEADLINE_S})
        plane.metadata.add_fault(fault, plane.metadata.identity_match())
        # Act
        plane.run()
        # Assert
        _expect_unavailable(ctx, plane, label)
        wall = plane.result.wall_s
        ctx.expect(wall <= IDENTITY_RUN_BOUND_S,
                   expected="exit within %.0f s (bootstrap timeout %.0f s, variant %s)"
                            % (IDENTITY_RUN_BOUND_S, IDENTITY_DEADLINE_S, label),
                   actual="exit after %.1f s" % wall,
                   diagnosis="the bootstrap timeout bounds the whole metadata exchange, as an elapsed deadline "
                             "(not a per-read socket timeout)")
        return plane

    run_variants(ctx, [("never answered", faults.hang()),
                       ("dripped", faults.dribble(DRIBBLE_CHUNK_BYTES, DRIBBLE_INTERVAL_S))], act)
