"""Reporting: where a run's outcome goes and what it says (CRAWLER-REPORT-*).

What these checks pin: a success is silent with exit 0; a failure after the
capability is a canonical failure bundle PUT with the result's seven headers,
"reported" and exit 0 when stored, "failed" and exit 1 when not; inputs that
made the upstream throw (deep nesting, huge integers, superscript digits, a
mis-typed field) end in one status line; and nothing but the code leaves the
process: no detail text from a peer or the child in the status line, the bundle
or the :fail body.
"""

import json
import time

from conformance.checks import check
from conformance.checks.crawler._common import (
    Match, describe_run, docs, each_variant, expect_outcome, expect_put_count, expect_put_wire, expect_reported,
    expect_success, faults)
from conformance.planes.crawler import SOURCE_PATH

SOURCE_HTTP_STATUS = "CRAWLER_SOURCE_HTTP_STATUS"
CHILD_FAILED = "CRAWLER_CHILD_FAILED"
RESPONSE_INVALID = "CRAWLER_BOOTSTRAP_RESPONSE_INVALID"
CAPABILITY_INVALID = "CRAWLER_UPLOAD_CAPABILITY_INVALID"
IDENTITY_UNAVAILABLE = "CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE"
REDEMPTION_FAILED = "CRAWLER_BOOTSTRAP_REDEMPTION_FAILED"

# Nesting depth of a balanced JSON array in report.no-traceback: far past
# MAX_JSON_DEPTH and Python's recursion limit, yet 2 * depth bytes stay under
# MAX_BOOTSTRAP_RESPONSE_BYTES (114688), so the parser, not the size bound,
# must refuse it.
DEEP_NESTING = 57000
# Digits of an integer past CPython's int-to-string limit (4300 digits in
# 3.11+), where int() raises ValueError instead of returning a huge number.
HUGE_INTEGER_DIGITS = 5000


def _marker(ctx, what):
    """A detail text the node must never repeat: unique per check run."""
    return "CANARYDETAIL%s%08x" % (what, ctx.rng.getrandbits(32))


def _expect_exact_stderr(ctx, plane, code, status, variant=None):
    want = docs.status_line(code, status).decode("utf-8")
    where = " (variant %s)" % variant if variant else ""
    ctx.expect(plane.result.stderr == want, expected="stderr exactly %r%s" % (want, where),
               actual="stderr %r" % plane.result.stderr[:300],
               diagnosis="the status line is the canonical {\"code\",\"status\"} and a newline, nothing else")


def _expect_marker_absent(ctx, plane, marker, variant):
    places = [("stderr", plane.result.stderr), ("stdout", plane.result.stdout)]
    places += [("the stored object %s" % key.rsplit("/", 1)[-1][:12], item.raw.decode("utf-8", "replace"))
               for key, item in plane.stored().items()]
    places += [(":fail body", call.body.decode("utf-8", "replace")) for call in plane.broker.fails()]
    found = [where for where, text in places if marker in (text or "")]
    ctx.expect(not found, expected="the peer's or child's detail text nowhere the node writes (variant %s)" % variant,
               actual="it appears in %s" % ", ".join(found),
               diagnosis="only the code leaves the process: no exception message, body or child output")


@check("report.success", clauses=["CRAWLER-REPORT-3", "CRAWLER-REPORT-4"], level="MUST",
       title="a successful run is silent and exits 0",
       fakes="a healthy run", expected="exit 0; stdout and stderr empty; one PUT; the result stored and "
                                       "verified; no :fail")
def _(ctx):
    plane = ctx.plane()
    plane.run()
    expect_success(ctx, plane)
    expect_put_count(ctx, plane, 1, "the result")
    ctx.expect(not plane.broker.fails(), expected="no :fail", actual="%d :fail POST(s)" % len(plane.broker.fails()),
               diagnosis="a successful run reports nothing on :fail: :fail is for the bootstrap's own failures")


@check("report.bundle", clauses=["CRAWLER-REPORT-2", "CRAWLER-REPORT-6", "CRAWLER-REPORT-1"], level="MUST",
       title="a failure after the capability is a canonical failure bundle PUT with the seven headers",
       fakes="the source answers 404 with a body carrying a marker",
       expected="one PUT, its body exactly the canonical bundle with CRAWLER_SOURCE_HTTP_STATUS, headers "
                "Host, Content-Length, the seven; status \"reported\", exit 0; the marker nowhere")
def _(ctx):
    marker = _marker(ctx, "SOURCE")
    plane = ctx.plane()
    plane.site.serve(SOURCE_PATH, ("not found: %s\n" % marker).encode("ascii"), content_type="text/plain", status=404)
    plane.run()
    expect_reported(ctx, plane, SOURCE_HTTP_STATUS)
    _expect_exact_stderr(ctx, plane, SOURCE_HTTP_STATUS, "reported")
    expect_put_count(ctx, plane, 1, "the bundle")
    want = docs.canonical(docs.failure_bundle(plane.broker.request, SOURCE_HTTP_STATUS))
    bundle = plane.stored_bundle()
    ctx.expect(bundle.raw == want, expected="the stored bundle exactly %s" % want.decode("utf-8"),
               actual="stored %r" % bundle.raw[:400],
               diagnosis="the bundle is canonical JSON of the six keys: the code and the request's identity")
    expect_put_wire(ctx, plane, plane.puts()[0], len(want), "the bundle PUT")
    _expect_marker_absent(ctx, plane, marker, "source 404")


@check("report.bundle-refused", clauses=["CRAWLER-REPORT-2", "CRAWLER-REPORT-4"], level="MUST",
       title="a failure bundle the store refuses is reported \"failed\" with exit 1",
       fakes="the source answers 404; the store answers every PUT 503",
       expected="{\"code\":\"CRAWLER_SOURCE_HTTP_STATUS\",\"status\":\"failed\"}, exit 1; nothing stored")
def _(ctx):
    plane = ctx.plane()
    plane.store.add_fault(faults.status(503, "ServiceUnavailable"), Match(method="PUT"))
    plane.site.serve(SOURCE_PATH, b"not found\n", content_type="text/plain", status=404)
    plane.run()
    ctx.expect(len(plane.puts()) >= 1, expected="a bundle PUT", actual="no PUT (%s)" % describe_run(plane),
               diagnosis="after the capability validated, report a failure with a bundle PUT, even when the store then "
                         "refuses it")
    expect_outcome(ctx, plane, SOURCE_HTTP_STATUS, "failed", 1)
    ctx.expect(not plane.stored(), expected="nothing stored", actual="%d object(s)" % len(plane.stored()),
               diagnosis="a refused PUT stores nothing: never retry it elsewhere or under another name")


def _patch_limits_list(request):
    request["query"]["limits"] = list(request["query"]["limits"].items())


def _huge_int_bootstrap(digits):
    """bootstrap_raw: the plane's bootstrap text with max_rows written as
    `digits` (text: the harness's own int() has the same limit as the node's)."""
    def raw(doc):
        text = json.dumps(doc)
        field = '"max_rows": %d' % doc["request"]["query"]["limits"]["max_rows"]
        if text.count(field) != 1:
            raise RuntimeError("cannot find max_rows in the bootstrap text")
        return text.replace(field, '"max_rows": ' + digits).encode("utf-8")
    return raw


def _superscript_expires(capability):
    # Percent-encoded superscript digits: printable ASCII in the URL
    # (CRAWLER-CAP-5 passes), decoding to "¹²³" where str.isdigit() is true
    # and int() raises (D6).
    url = capability["upload_url"]
    head, _, tail = url.partition("X-Goog-Expires=")
    value, amp, rest = tail.partition("&")
    capability["upload_url"] = head + "X-Goog-Expires=%C2%B9%C2%B2%C2%B3" + amp + rest


@check("report.no-traceback", clauses=["CRAWLER-REPORT-5", "CRAWLER-REPORT-3"], level="MUST",
       title="inputs that made the upstream throw end in one status line, never a traceback (D15)",
       fakes="the bootstrap is an array nested 57000 deep (114000 bytes, under the bound); the request "
             "holds max_rows 10**400, or an integer of 5000 digits; X-Goog-Expires is superscript "
             "digits; query.limits is a list",
       expected="exactly one canonical status line each: RESPONSE_INVALID (x4, with :fail), "
                "CAPABILITY_INVALID; exit 1; no traceback")
def _(ctx):
    deep = b"[" * DEEP_NESTING + b"]" * DEEP_NESTING
    variants = [
        ("array nested %d deep" % DEEP_NESTING, ({"bootstrap_raw": deep}, RESPONSE_INVALID)),
        ("max_rows 10**400", ({"bootstrap_raw": _huge_int_bootstrap("1" + "0" * 400)}, RESPONSE_INVALID)),
        ("max_rows of %d digits" % HUGE_INTEGER_DIGITS,
         ({"bootstrap_raw": _huge_int_bootstrap("9" * HUGE_INTEGER_DIGITS)}, RESPONSE_INVALID)),
        ("superscript X-Goog-Expires", ({"capability_patch": _superscript_expires}, CAPABILITY_INVALID)),
        ("limits a list", ({"request_patch": _patch_limits_list}, RESPONSE_INVALID)),
    ]

    def act(label, value):
        options, code = value
        plane = ctx.plane(**options)
        plane.run()
        ctx.expect("Traceback" not in plane.result.stderr, expected="no traceback (variant %s)" % label,
                   actual="stderr %r" % plane.result.stderr[-300:],
                   diagnosis="an error the node did not foresee is CRAWLER_JOB_FAILED or its phase's code")
        expect_outcome(ctx, plane, code, "failed", 1, label)
        _expect_exact_stderr(ctx, plane, code, "failed", label)
    each_variant(ctx, variants, act)


@check("report.no-detail", clauses=["CRAWLER-REPORT-6", "CRAWLER-REPORT-3"], level="MUST",
       title="only the code leaves the process: no child output or peer text in any report",
       fakes="the child writes a marker on stderr and exits 3; the metadata server answers 500 with a "
             "marker body; :redeem answers 500 with a marker body",
       expected="CHILD_FAILED reported (bundle exactly canonical) / WORKLOAD_IDENTITY_UNAVAILABLE failed / "
                "REDEMPTION_FAILED failed (:fail body exactly {\"failure_code\":...}); stderr exactly the "
                "canonical line; the marker nowhere")
def _(ctx):
    def act(label, kind):
        marker = _marker(ctx, kind)
        if kind == "CHILD":
            plane = ctx.plane(child={"mode": "fail", "stderr": "%s: parser exploded\n" % marker, "exit": 3})
            plane.run()
            expect_reported(ctx, plane, CHILD_FAILED, label)
            _expect_exact_stderr(ctx, plane, CHILD_FAILED, "reported", label)
            want = docs.canonical(docs.failure_bundle(plane.broker.request, CHILD_FAILED))
            ctx.expect(plane.stored_bundle().raw == want, expected="the bundle exactly %s" % want.decode(),
                       actual="stored %r" % plane.stored_bundle().raw[:400],
                       diagnosis="PUT the canonical failure bundle exactly: the failure vocabulary's code and the "
                                 "request's fields, canonical JSON, nothing from the child")
        elif kind == "METADATA":
            plane = ctx.plane(identity_status=500, identity_body=("%s: backend error\n" % marker).encode())
            plane.run()
            expect_outcome(ctx, plane, IDENTITY_UNAVAILABLE, "failed", 1, label)
            _expect_exact_stderr(ctx, plane, IDENTITY_UNAVAILABLE, "failed", label)
        else:
            plane = ctx.plane(redeem_status=500, redeem_body=("{\"error\": \"%s\"}" % marker).encode())
            plane.run()
            expect_outcome(ctx, plane, REDEMPTION_FAILED, "failed", 1, label)
            _expect_exact_stderr(ctx, plane, REDEMPTION_FAILED, "failed", label)
            want = docs.canonical({"failure_code": REDEMPTION_FAILED})
            bodies = [call.body for call in plane.broker.fails()]
            ctx.expect(bodies == [want], expected="one :fail with the body exactly %s" % want.decode(),
                       actual="bodies %r" % [body[:200] for body in bodies],
                       diagnosis="send :fail with the body exactly {\"failure_code\":\"<code>\"} in canonical JSON, "
                                 "once")
        _expect_marker_absent(ctx, plane, marker, label)
    each_variant(ctx, [("child stderr", "CHILD"), ("metadata 500 body", "METADATA"),
                       (":redeem 500 body", "REDEEM")], act)


# A quote followed by escaped quotes, "\"\"\"...: the string never closes, so
# a tokenizer that needs a closing quote fails at the end and starts again at
# each later quote (quadratic: about 50 s for the bootstrap's 112 KiB, hours
# for the child's 8 MiB). Each must be refused within HOSTILE_BOUND_S.
HOSTILE_RESULT_PAIRS = 1024 * 1024
HOSTILE_BOOTSTRAP_PAIRS = 55 * 1024
HOSTILE_BOUND_S = 10.0


@check("report.hostile-json", clauses=["CRAWLER-REPORT-5", "CRAWLER-RESULT-1", "CRAWLER-BOOT-4"], level="MUST",
       title="a document of unclosed quotes is refused as promptly as any malformed one",
       fakes="one run each: the :redeem answer is a quote and 55 Ki escaped quotes (110 KiB); the scripted "
             "child exits 0 with a quote and 1 Mi escaped quotes (2 MiB) on stdout",
       expected="RESPONSE_INVALID (with :fail), then CHILD_INVALID reported; each run over within %.0f s"
                % HOSTILE_BOUND_S)
def _(ctx):
    variants = [
        ("bootstrap of unclosed quotes", ({"bootstrap_raw": b'"' + b'\\"' * HOSTILE_BOOTSTRAP_PAIRS},
                                          "CRAWLER_BOOTSTRAP_RESPONSE_INVALID", "failed", 1)),
        ("child result of unclosed quotes", ({"child": {"mode": "raw",
                                                        "stdout": '"' + '\\"' * HOSTILE_RESULT_PAIRS}},
                                             "CRAWLER_CHILD_INVALID", "reported", 0)),
    ]

    def act(label, value):
        options, code, status, exit_code = value
        # Arrange
        plane = ctx.plane(**options)
        # Act
        started = time.monotonic()
        plane.run()
        took = time.monotonic() - started
        # Assert
        ctx.expect(took <= HOSTILE_BOUND_S and not plane.result.timed_out,
                   expected="the run over within %.0f s (variant %s)" % (HOSTILE_BOUND_S, label),
                   actual="%.1f s%s" % (took, ", killed by the harness" if plane.result.timed_out else ""),
                   diagnosis="the JSON tokenizer is quadratic on unclosed strings: let a string that never "
                             "closes run to the end of the text in one match")
        expect_outcome(ctx, plane, code, status, exit_code, label)
    each_variant(ctx, variants, act)
