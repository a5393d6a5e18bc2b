"""The dispatch exchange: one identity token, one exchange, a bounded answer that decides.

SESSION-DISPATCH-1 pins the exchange URL and the audience to STUDIO_API_ORIGIN before any token
is fetched, so an operator's override cannot aim the identity-bearing request elsewhere (not
even the metadata server is asked). SESSION-DISPATCH-2 fixes the one identity request and the
token's shape; SESSION-DISPATCH-3 the one exchange request (its headers and canonical body),
never resent, since a Job retry of a dispatch already exchanged could only strand the lease the
first obtained. SESSION-DISPATCH-4 bounds the answer whatever its status; SESSION-DISPATCH-5
says how the answer decides, and SESSION-DISPATCH-6 makes a consumed dispatch a quiet success:
exiting 1 would make the platform retry a task that can only meet the same answer.
"""

import urllib.parse
import uuid

from conformance.checks import check
from conformance.checks.session._common import (
    capability_calls, describe_run, each_variant, expect_no_request, expect_summary, faults, refusal)
from conformance.planes.session.control import canonical

EXCHANGE_PATH = "/internal/v3/session-worker/dispatches/%s:exchange"
IDENTITY_PATH = "/computeMetadata/v1/instance/service-accounts/default/identity"
MAX_SESSION_DISPATCH_RESPONSE_BYTES = 65536
# An endless answer: far past the bound, so a node that reads it whole shows it in time and memory.
ENDLESS_EXTRA_BYTES = 256 << 20
# SESSION-DISPATCH-4: an endless answer ends the run "promptly", with peak memory "far below the
# bytes sent". The run is an interpreter start, a fork, a token and one exchange; a node's tree
# peaks near 30 MiB of its own, whatever it reads.
PROMPT_END_S = 8.0
MAX_PEAK_RSS_BYTES = 96 << 20


def _job_argv(plane, url=None, audience=None):
    control = plane.control
    return ["--session-dispatch-id", control.dispatch_id,
            "--session-dispatch-exchange-url", url or control.exchange_url,
            "--session-dispatch-audience", audience or control.exchange_audience]


# SESSION-DISPATCH-1: (label, (url builder, audience builder), code); builders take the origin and id.
UNRECOGNIZED = [
    ("exchange URL of another dispatch", (lambda o, d: o + EXCHANGE_PATH % uuid.uuid4(), None),
     "SESSION_DISPATCH_URL_UNRECOGNIZED"),
    ("exchange URL on another host", (lambda o, d: "https://studio.invalid" + EXCHANGE_PATH % d, None),
     "SESSION_DISPATCH_URL_UNRECOGNIZED"),
    ("exchange URL with an added path", (lambda o, d: o + "/v2" + EXCHANGE_PATH % d, None),
     "SESSION_DISPATCH_URL_UNRECOGNIZED"),
    ("exchange URL on another port", (lambda o, d: o.rsplit(":", 1)[0] + ":1" + EXCHANGE_PATH % d, None),
     "SESSION_DISPATCH_URL_UNRECOGNIZED"),
    ("audience with a path", (None, lambda o, d: o + "/audience"), "SESSION_DISPATCH_AUDIENCE_UNRECOGNIZED"),
    ("audience of another host", (None, lambda o, d: "https://studio.invalid"),
     "SESSION_DISPATCH_AUDIENCE_UNRECOGNIZED"),
]

# SESSION-DISPATCH-2: metadata answers that are no identity token (the plane's metadata options).
BAD_IDENTITY = [
    ("status 500", {"identity_status": 500}),
    ("not a JWT", {"identity_body": "not-a-jwt"}),
    ("a trailing newline", {"identity_body": "newline"}),
    ("empty", {"identity_body": "empty"}),
]


@check("dispatch.names-this-plane", clauses=["SESSION-DISPATCH-1"], level="MUST",
       title="an exchange URL or audience that does not name this control plane ends the run before any request",
       fakes="a healthy plane; Job mode's cells name another dispatch's URL, another host, an added path, another "
             "port, or an audience with a path or of another host (one variant per run)",
       expected="SESSION_DISPATCH_URL_UNRECOGNIZED or SESSION_DISPATCH_AUDIENCE_UNRECOGNIZED, exit 1; no request "
                "at all, the metadata server included")
def _(ctx):
    def act(label, value):
        (url, audience), code = value
        plane = ctx.plane()
        origin, dispatch_id = plane.control.origin, plane.control.dispatch_id
        plane.close_session()  # a node that wrongly goes on ends at its first claim
        plane.run(argv=_job_argv(plane, url and url(origin, dispatch_id), audience and audience(origin, dispatch_id)))
        expect_summary(ctx, plane, failure_code=code, variant=label)
        expect_no_request(ctx, plane, label)

    each_variant(ctx, [(label, (builders, code)) for label, builders, code in UNRECOGNIZED], act)


@check("dispatch.identity", clauses=["SESSION-DISPATCH-2"], level="MUST",
       title="one identity request for the audience, and only a compact token is accepted",
       fakes="a healthy plane, then a metadata server that answers 500, or a body that is not a token, has a "
             "newline, or is empty (one variant per run)",
       expected="one GET of the identity path with audience=<origin>&format=full, Metadata-Flavor: Google, no "
                "Authorization, no body; then the exchange; each bad answer is SESSION_IDENTITY_UNAVAILABLE, exit 1, "
                "and no exchange")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    # Act
    plane.start()
    plane.wait_claims(1)
    plane.close_session()
    plane.wait()
    # Assert
    asked = plane.metadata.requests()
    wanted_query = urllib.parse.urlencode((("audience", plane.control.exchange_audience), ("format", "full")))
    ctx.expect(len(asked) == 1, expected="exactly one identity request", actual="%d" % len(asked),
               diagnosis="the token is fetched once, for the one exchange")
    first = asked[0]
    shown = "%s %s?%s, Metadata-Flavor %r, Authorization %s, body %d bytes" % (
        first.exchange.method, first.exchange.path.split("?")[0], first.raw_query, first.flavor,
        "sent" if first.authorization else "absent", first.body_bytes)
    ctx.expect(first.exchange.method == "GET" and first.exchange.path.split("?")[0] == IDENTITY_PATH
               and first.raw_query == wanted_query and first.flavor == "Google" and not first.authorization
               and first.body_bytes == 0,
               expected="GET %s?%s with Metadata-Flavor: Google, no Authorization, no body" % (IDENTITY_PATH,
                                                                                              wanted_query),
               actual=shown, diagnosis="the identity request names the audience as urlencode does, with format=full")
    expect_summary(ctx, plane, terminal_state="closed")

    def act(label, options):
        plane = ctx.plane(**options)
        plane.close_session()  # a node that wrongly goes on ends at its first claim
        plane.run()
        expect_summary(ctx, plane, failure_code="SESSION_IDENTITY_UNAVAILABLE", variant=label)
        sent = plane.control.calls()
        ctx.expect(not sent, expected="no exchange after a bad identity answer (variant %s)" % label,
                   actual="%d control-plane request(s)" % len(sent),
                   diagnosis="without an identity token the exchange is never sent")

    each_variant(ctx, BAD_IDENTITY, act)


@check("dispatch.exchange-request", clauses=["SESSION-DISPATCH-3"], level="MUST",
       title="the exchange is one POST with exactly its headers and the canonical body, never resent",
       fakes="a healthy plane; then the exchange's connection reset before its answer, then a 307 redirect to "
             "the same URL (one variant per run)",
       expected="one POST to the exchange URL bearing the identity token, headers exactly Host, Authorization, "
                "Content-Type, Accept, Content-Length, body {\"dispatch_id\",\"schema_version\":\"3.0.0\"} canonical; "
                "after a reset or a redirect SESSION_DISPATCH_EXCHANGE_FAILED, exit 1, and still one exchange")
def _(ctx):
    plane = ctx.plane()
    plane.start()
    plane.wait_claims(1)
    plane.close_session()
    plane.wait()
    exchanges = plane.control.calls("exchange")
    ctx.expect(len(exchanges) == 1, expected="one exchange request", actual="%d" % len(exchanges),
               diagnosis="the exchange is sent exactly once")
    call = exchanges[0]
    body = canonical({"dispatch_id": plane.control.dispatch_id, "schema_version": "3.0.0"})
    ctx.expect(call.method == "POST" and call.path == EXCHANGE_PATH % plane.control.dispatch_id
               and call.bearer == "identity" and call.body == body and not call.header_problems,
               expected="POST %s bearing the identity token, body %r, headers exactly Host, Authorization, "
                        "Content-Type, Accept, Content-Length" % (EXCHANGE_PATH % plane.control.dispatch_id, body),
               actual="%s %s, bearer %s, body %r, %s" % (call.method, call.path, call.bearer, call.body[:200],
                                                         ", ".join(call.header_problems) or "headers as wanted"),
               diagnosis="the exchange request is fixed: its body carries no secret and nothing else")
    expect_summary(ctx, plane, terminal_state="closed")

    def act(label, fault):
        plane = ctx.plane()
        plane.control.add_fault(fault(plane), plane.control.exchange_match(phase="response"))
        plane.close_session()  # a node that wrongly goes on ends at its first claim
        plane.run()
        expect_summary(ctx, plane, failure_code="SESSION_DISPATCH_EXCHANGE_FAILED", variant=label)
        sent = [c.verb for c in plane.control.calls()]
        ctx.expect(sent == ["exchange"], expected="exactly one request, the exchange (variant %s)" % label,
                   actual="requests %s" % sent,
                   diagnosis="the exchange is never resent and a redirect never followed: a resend could only "
                             "strand the lease the first one obtained")

    each_variant(ctx, [("reset", lambda p: faults.reset(after_bytes=0)),
                       ("307 redirect", lambda p: faults.redirect(p.control.exchange_url, code=307))], act)


@check("dispatch.bounded-answer", clauses=["SESSION-DISPATCH-4"], level="MUST",
       title="an exchange answer over 64 KiB is refused, whatever its status; an endless one ends the run promptly",
       fakes="the exchange answered 200 with a Content-Length of 64 KiB + 1, 403 with the same, or the lease "
             "followed by 256 MiB without a Content-Length (one variant per run)",
       expected="SESSION_DISPATCH_RESPONSE_INVALID, exit 1, no capability call; the endless answer ends the run "
                "within %.0f s, with a peak RSS under %d MiB" % (PROMPT_END_S, MAX_PEAK_RSS_BYTES >> 20))
def _(ctx):
    oversized = b'{"pad":"' + b"x" * MAX_SESSION_DISPATCH_RESPONSE_BYTES + b'"}'

    def act(label, fault):
        plane = ctx.plane()
        plane.control.add_fault(fault, plane.control.exchange_match())
        result = plane.run()
        expect_summary(ctx, plane, failure_code="SESSION_DISPATCH_RESPONSE_INVALID", variant=label)
        ctx.expect(not capability_calls(plane), expected="no capability call (variant %s)" % label,
                   actual=lambda: describe_run(plane), diagnosis="an answer too large is no lease")
        ctx.expect(result.wall_s <= PROMPT_END_S and (result.maxrss_bytes or 0) <= MAX_PEAK_RSS_BYTES,
                   expected="the run over within %.0f s, peak RSS under %d MiB (variant %s)" % (
                       PROMPT_END_S, MAX_PEAK_RSS_BYTES >> 20, label),
                   actual="%.1f s, peak RSS %.1f MiB" % (result.wall_s, (result.maxrss_bytes or 0) / 1048576.0),
                   diagnosis="read at most the bound plus one byte; never the whole answer")

    each_variant(ctx, [("200 over the bound", faults.status(200, body=oversized)),
                       ("403 over the bound", faults.status(403, body=oversized)),
                       ("endless, no Content-Length", faults.oversize(ENDLESS_EXTRA_BYTES, content_length="absent"))],
                 act)


@check("dispatch.refusal", clauses=["SESSION-DISPATCH-5"], level="MUST",
       title="a refusal ends the run with its body's code, else SESSION_DISPATCH_EXCHANGE_FAILED; a 200 must be "
             "a strict-JSON object",
       fakes="the exchange answered 403 {code EXCHANGE_DENIED}, 500 with HTML, 403 with a lower-case code; or 200 "
             "with an array, text, duplicate keys (one variant per run)",
       expected="exit 1 with failure_code EXCHANGE_DENIED for the first, SESSION_DISPATCH_EXCHANGE_FAILED for the "
                "other refusals, SESSION_DISPATCH_RESPONSE_INVALID for the 200s; no capability call; the detail "
                "repeated nowhere")
def _(ctx):
    def act(label, value):
        build, code = value
        plane = ctx.plane()
        plane.control.add_fault(build(plane.control.detail_canary), plane.control.exchange_match())
        plane.close_session()  # a node that wrongly goes on ends at its first claim
        plane.run()
        expect_summary(ctx, plane, failure_code=code, variant=label)
        ctx.expect(not capability_calls(plane), expected="no capability call (variant %s)" % label,
                   actual=lambda: describe_run(plane), diagnosis="a refused exchange gives no lease")

    failed, invalid = "SESSION_DISPATCH_EXCHANGE_FAILED", "SESSION_DISPATCH_RESPONSE_INVALID"
    each_variant(ctx, [
        ("403 with a code", (lambda c: refusal(403, "EXCHANGE_DENIED", detail=c), "EXCHANGE_DENIED")),
        ("500 with HTML", (lambda c: faults.status(500, body=b"<html>" + c.encode() + b"</html>"), failed)),
        ("403 with a lower-case code", (lambda c: refusal(403, "exchange_denied", detail=c), failed)),
        ("200 with an array", (lambda c: faults.status(200, body=b"[]"), invalid)),
        ("200 with text", (lambda c: faults.status(200, body=b"lease " + c.encode()), invalid)),
        ("200 with duplicate keys", (lambda c: faults.status(200, body=b'{"fence":1,"fence":2}'), invalid)),
    ], act)


@check("dispatch.consumed", clauses=["SESSION-DISPATCH-6"], level="MUST",
       title="a dispatch already claimed or closed is a quiet success: dispatch_consumed, exit 0",
       fakes="the exchange refused 409 RESEARCH_SESSION_DISPATCH_ALREADY_CLAIMED, then "
             "RESEARCH_SESSION_DISPATCH_CLOSED (one variant per run)",
       expected="a summary with terminal_state dispatch_consumed, exit 0; the exchange the only control-plane "
                "request")
def _(ctx):
    def act(label, state):
        plane = ctx.plane(dispatch_state=state)
        plane.close_session()  # a node that wrongly goes on ends at its first claim
        plane.run()
        expect_summary(ctx, plane, terminal_state="dispatch_consumed", variant=label)
        sent = [c.verb for c in plane.control.calls()]
        ctx.expect(sent == ["exchange"], expected="nothing sent after the refusal (variant %s)" % label,
                   actual="requests %s" % sent,
                   diagnosis="another task has the session, or it is over: the node sends nothing further")

    each_variant(ctx, [("already claimed", "claimed"), ("closed", "closed")], act)
