"""The :fail report: three codes only, one exact request, one best-effort attempt.

CRAWLER-FAIL-1 allows exactly CRAWLER_BOOTSTRAP_REDEMPTION_FAILED,
CRAWLER_BOOTSTRAP_RESPONSE_INVALID and CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE on
:fail, each as one POST with a fresh token for the :fail audience, three fixed
headers, no execution header, and the canonical body {"failure_code": ...};
every other failure (stderr-only or a bundle) never reaches :fail.
CRAWLER-FAIL-2 makes the report a single best-effort attempt: whatever the
broker answers (a refusal, a redirect, silence, a drip) the status line and the
exit status stay the same, nothing is retried or followed, and the bootstrap
timeout bounds the wait.
"""

import json

from conformance.checks import check
from conformance.checks.crawler._common import (
    DEADLINE_SLACK_S, SHORT_DEADLINE_S, Match, docs, expect_outcome, expect_reported, faults)
from conformance.checks.crawler._common import run_variants
from conformance.planes.crawler import BROKER_PATH

REDEMPTION_FAILED = "CRAWLER_BOOTSTRAP_REDEMPTION_FAILED"
RESPONSE_INVALID = "CRAWLER_BOOTSTRAP_RESPONSE_INVALID"
TOO_LARGE = "CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE"
EXECUTION_HEADER = "x-mostlyright-cloud-run-execution"

# The bootstrap timeout given to the node in fail.best-effort, so a :fail
# that is never answered costs a short wait, and the bound on the whole run
# (identity, :redeem, identity, :fail, start-up and the status line).
FAIL_DEADLINE_S = SHORT_DEADLINE_S
FAIL_RUN_BOUND_S = FAIL_DEADLINE_S + DEADLINE_SLACK_S
# A dripping broker: one byte every quarter second (D9: only an elapsed
# deadline ends such an exchange).
DRIBBLE_CHUNK_BYTES = 1
DRIBBLE_INTERVAL_S = 0.25
# Retry-After offered with a refusal, to tempt a retry.
RETRY_AFTER_S = 1
# A past expiry for the capability (seconds before the redemption).
EXPIRED_AGO_S = 60


def _too_large_bootstrap(doc):
    """One byte over MAX_BOOTSTRAP_RESPONSE_BYTES (CRAWLER-BOOT-3)."""
    raw = json.dumps(doc).encode("utf-8")
    return raw + b" " * (docs.MAX_BOOTSTRAP_RESPONSE_BYTES + 1 - len(raw))


# The three :fail codes and a plane arrangement that produces each.
FAIL_ROUTE_CASES = [
    (REDEMPTION_FAILED, {"redeem_status": 500}),
    (RESPONSE_INVALID, {"bootstrap_patch": lambda doc: dict(doc, extra=1)}),
    (TOO_LARGE, {"bootstrap_raw": _too_large_bootstrap}),
]


@check("fail.shape", clauses=["CRAWLER-FAIL-1"], level="MUST",
       title="the :fail report: POST <url base>/<sid>:fail, a fresh :fail token, three headers, the canonical body",
       fakes=":redeem answers 500; then a bootstrap with an extra key; then one a byte over the bound (one per run, "
             "one per :fail code)",
       expected="one POST to <url base path>/<sid>:fail without query; Authorization: Bearer <token #2, minted "
                "for <audience base>/<sid>:fail>; Accept and Content-Type application/json; no execution header; "
                "body exactly {\"failure_code\":\"<code>\"}; the status line names the same code")
def _(ctx):
    def act(code, options):
        # Arrange
        plane = ctx.plane(**options)
        # Act
        plane.run()
        # Assert
        expect_outcome(ctx, plane, code, "failed", 1, code)
        fails = plane.broker.fails()
        ctx.expect(len(fails) == 1, expected="one :fail report for %s" % code, actual="%d :fail" % len(fails),
                   diagnosis="%s is reported on :fail, once" % code)
        call = fails[0]
        want_path = "%s/%s:fail" % (BROKER_PATH, plane.session_id)
        ctx.expect(call.exchange.method == "POST" and call.raw_path == want_path and not call.has_query,
                   expected="POST %s (no query)" % want_path,
                   actual="%s %s%s" % (call.exchange.method, call.raw_path, " with a query" if call.has_query else ""),
                   diagnosis="POST :fail to the url base's path plus /<session id>:fail, exactly, with no query")
        tokens = plane.metadata.tokens()
        ctx.expect(len(tokens) == 2 and tokens[1].audience == plane.broker.audience("fail") and call.token_seq == 2
                   and call.header_all("authorization") == ["Bearer " + tokens[1].token],
                   expected="one Authorization: Bearer <token #2>, minted for %s" % plane.broker.audience("fail"),
                   actual=lambda: "%d token(s) minted (audiences %s); :fail presented token #%s in %d header(s)" % (
                       len(tokens), [t.audience for t in tokens], call.token_seq,
                       len(call.header_all("authorization"))),
                   diagnosis=":fail has its own token, minted for the :fail audience (CRAWLER-IDENTITY-2)")
        ctx.expect(call.header_all("accept") == ["application/json"]
                   and call.header_all("content-type") == ["application/json"],
                   expected="Accept: application/json and Content-Type: application/json",
                   actual="Accept %s, Content-Type %s" % (call.header_all("accept"), call.header_all("content-type")),
                   diagnosis="send :fail with Accept: application/json and Content-Type: application/json, once each")
        ctx.expect(not call.header_all(EXECUTION_HEADER), expected="no X-Mostlyright-Cloud-Run-Execution header",
                   actual="X-Mostlyright-Cloud-Run-Execution %s" % call.header_all(EXECUTION_HEADER),
                   diagnosis="the execution header belongs to :redeem only")
        body = docs.canonical({"failure_code": code})
        ctx.expect(call.body == body and call.content_length == len(body) and not call.chunked,
                   expected="the body %s with Content-Length %d" % (body.decode(), len(body)),
                   actual="body %r, Content-Length %r, chunked %s" % (call.body[:300], call.content_length,
                                                                      call.chunked),
                   diagnosis="the code and nothing else, as canonical JSON (CRAWLER-REPORT-6)")
        return plane

    run_variants(ctx, FAIL_ROUTE_CASES, act)


@check("fail.allowlist", clauses=["CRAWLER-FAIL-1", "CRAWLER-REPORT-1"], level="MUST",
       title="no failure but the three bootstrap codes is ever reported on :fail",
       fakes="one run each: the capability's method is \"put\"; the capability expired a minute ago; the "
             "metadata server answers 500; the egress policy variable is \"{}\"; the source answers 404; "
             "the store refuses the result PUT with 503",
       expected="the codes CRAWLER_UPLOAD_CAPABILITY_INVALID, _EXPIRED, CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE, "
                "CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID, CRAWLER_SOURCE_HTTP_STATUS (reported), "
                "CRAWLER_UPLOAD_FAILED; zero :fail requests in every run")
def _(ctx):
    def act(label, case):
        arrange, code, status, exit_code = case
        # Arrange
        plane = ctx.plane(**arrange.get("options", {}))
        if "after" in arrange:
            arrange["after"](plane)
        # Act
        plane.run()
        # Assert
        if status == "reported":
            expect_reported(ctx, plane, code, label, exit_code)
        else:
            expect_outcome(ctx, plane, code, status, exit_code, label)
        fails = plane.broker.fails()
        ctx.expect(not fails, expected="no :fail request (variant %s, code %s)" % (label, code),
                   actual="%d :fail request(s), bodies %s" % (len(fails), [f.body[:120] for f in fails]),
                   diagnosis="only the three bootstrap codes go to :fail (CRAWLER-REPORT-1)")
        return plane

    run_variants(ctx, [
        ("capability invalid", ({"options": {"capability_patch": lambda cap: dict(cap, method="put")}},
                                "CRAWLER_UPLOAD_CAPABILITY_INVALID", "failed", 1)),
        ("capability expired", ({"options": {"expires_in_s": -EXPIRED_AGO_S}},
                                "CRAWLER_UPLOAD_CAPABILITY_EXPIRED", "failed", 1)),
        ("identity unavailable", ({"options": {"identity_status": 500}},
                                  "CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE", "failed", 1)),
        ("configuration invalid (policy)", ({"options": {"policy_raw": "{}"}},
                                            "CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID", "failed", 1)),
        ("source answers 404 (bundle)", ({"after": lambda plane: plane.site.serve(plane.site.source_path, b"gone\n",
                                                                          content_type="text/plain", status=404)},
                                         "CRAWLER_SOURCE_HTTP_STATUS", "reported", 0)),
        ("result PUT refused",
         ({"after": lambda plane: plane.store.add_fault(faults.status(503), Match(method="PUT"))},
          "CRAWLER_UPLOAD_FAILED", "failed", 1)),
    ], act)


@check("fail.best-effort", clauses=["CRAWLER-FAIL-2"], level="MUST",
       title="whatever :fail answers, it is sent once, nothing is followed, and the outcome is the same",
       fakes="bootstrap timeout 2 s; :redeem answers 500; :fail answers 200 with a body, 500 with Retry-After, "
             "401, 302 or 307 to the tripwire, resets, never answers, or drips one byte every 0.25 s (one per run)",
       expected="CRAWLER_BOOTSTRAP_REDEMPTION_FAILED failed, exit 1, within 2 s + 4 s slack; exactly one :fail; "
                "no tripwire connection")
def _(ctx):
    def act(label, arrange):
        # Arrange
        plane = ctx.plane(redeem_status=500, timeouts={"bootstrap": FAIL_DEADLINE_S})
        arrange(plane)
        # Act
        plane.run()
        # Assert
        expect_outcome(ctx, plane, REDEMPTION_FAILED, "failed", 1, label)
        fails = plane.broker.fails()
        ctx.expect(len(fails) == 1, expected="exactly one :fail (variant %s)" % label,
                   actual="%d :fail" % len(fails), diagnosis="the report is sent once and never retried")
        connections = len(plane.tripwire.connections)
        ctx.expect(connections == 0, expected="no connection to the tripwire (variant %s)" % label,
                   actual="%d connection(s)" % connections, diagnosis="a redirect answering :fail is not followed")
        wall = plane.result.wall_s
        ctx.expect(wall <= FAIL_RUN_BOUND_S,
                   expected="exit within %.0f s (bootstrap timeout %.0f s; variant %s)"
                            % (FAIL_RUN_BOUND_S, FAIL_DEADLINE_S, label),
                   actual="exit after %.1f s" % wall,
                   diagnosis="the report gives up at the bootstrap timeout, an elapsed deadline for the exchange")
        return plane

    def answer(status, body=b""):
        def arrange(plane):
            plane.broker.fail_status, plane.broker.fail_body = status, body
        return arrange

    def on_fail(fault):
        return lambda plane: plane.broker.add_fault(fault, plane.broker.fail_match())

    def redirect(code):
        return lambda plane: plane.broker.add_fault(faults.redirect(
            plane.tripwire.url("%s/%s:fail" % (BROKER_PATH, plane.session_id)), code=code), plane.broker.fail_match())

    run_variants(ctx, [
        ("200 with a body", answer(200, b'{"accepted": false, "retry": true}')),
        ("500 with Retry-After", on_fail(faults.status(500, retry_after_s=RETRY_AFTER_S))),
        ("401", answer(401, b'{"error": "token"}')),
        ("302 to the tripwire", redirect(302)),
        ("307 to the tripwire", redirect(307)),
        ("connection reset", on_fail(faults.reset(after_bytes=0))),
        ("never answered", on_fail(faults.hang())),
        ("dripped", on_fail(faults.dribble(DRIBBLE_CHUNK_BYTES, DRIBBLE_INTERVAL_S))),
    ], act)
