"""result.json: shape, the 1 MiB ceiling, fact rules, and the failure path."""

import json

from conformance import schema
from conformance.checks import check
from conformance.checks.step._common import (
    contract_schema,
    Input, Match, RESULT_NAME, csv_inputs, expect_exit, expect_marker, expect_not_listed, faults)
from conformance.planes.step import IDENTITY

MAX_RESULT_BYTES = 1 << 20


def _report(ctx, plane):
    ctx.expect(isinstance(plane.report, dict), expected="result.json in staging, a JSON object",
               actual="absent" if plane.report_raw is None else "not a JSON object")
    return plane.report


@check("result.shape", clauses=["STEP-RESULT-1", "STEP-RESULT-3"], level="MUST",
       title="result.json has the contract's shape, metrics and one input fact per copy",
       fakes="three CSV inputs; manifest params {'greeting': 'hello'}",
       expected="schema-valid; metrics files 3, total_bytes, lines exact; params echoed; facts in order")
def _(ctx):
    items = csv_inputs(3, rows=7)
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "a healthy run")
    report = _report(ctx, plane)
    problems = schema.validate(report, contract_schema("result"))
    ctx.expect(not problems, expected="valid against contract/schemas/step/result.schema.json",
               actual="; ".join(problems[:5]))
    want_metrics = {"files": 3, "total_bytes": sum(i.true_size for i in items),
                    "lines": sum(i.data.count(b"\n") for i in items)}
    ctx.expect(report.get("metrics") == want_metrics, expected="metrics %s" % want_metrics,
               actual="metrics %s" % report.get("metrics"))
    summary = report.get("summary") or {}
    ctx.expect(summary.get("params") == {"greeting": "hello"} and summary.get("attempt") == IDENTITY["attempt"],
               expected="summary.params echoed exactly, summary.attempt %d" % IDENTITY["attempt"],
               actual="summary %s" % json.dumps(summary)[:200])
    facts = report.get("facts")
    want = [{"key": "input", "value": i.relpath} for i in items]
    ctx.expect(facts == want, expected="facts %s" % want, actual="facts %s" % facts)


@check("result.params-ceiling", clauses=["STEP-RESULT-2"], level="MUST",
       title="params that would push result.json past 1 MiB give way first",
       fakes="manifest params: 300 keys of 8 KiB each (~2.4 MiB)",
       expected="exit 0; result.json <= 1 MiB; params null, params_omitted, params_keys (64 sorted), params_count")
def _(ctx):
    params = {"k%03d" % i: "v" * 8192 for i in range(300)}
    manifest = dict(IDENTITY, schema_version=1, params=params)
    plane = ctx.step_plane(inputs=csv_inputs(1), manifest=manifest)
    plane.run()
    expect_exit(ctx, plane, 0, "an oversize echo is dropped, not fatal")
    report = _report(ctx, plane)
    ctx.expect(len(plane.report_raw) <= MAX_RESULT_BYTES, expected="<= 1 MiB",
               actual="%d bytes" % len(plane.report_raw))
    summary = report.get("summary") or {}
    want_keys = sorted(params)[:64]
    ctx.expect(summary.get("params") is None and "params_omitted" in summary
               and summary.get("params_keys") == want_keys and summary.get("params_count") == 300,
               expected="params null, params_omitted, params_keys = first 64 sorted keys, params_count 300",
               actual="summary keys %s; params_count %r" % (sorted(summary), summary.get("params_count")))
    ctx.expect(report.get("facts"), expected="facts kept", actual="facts %r" % report.get("facts"))


@check("result.facts-ceiling", clauses=["STEP-RESULT-2"], level="MUST",
       title="when facts alone pass 1 MiB they are halved, keeping the first ones",
       fakes="local mode; 2600 inputs with 400-character names (facts ~1.1 MiB)",
       expected="exit 0; result.json <= 1 MiB; facts a prefix in input order; facts_omitted present")
def _(ctx):
    # Two path components: a single 400-character file name is over NAME_MAX.
    items = [Input(("%05d-" % i) + "n" * 194 + "/" + "m" * 199, b"%d\n" % i, source="local")
             for i in range(2600)]
    plane = ctx.step_plane(inputs=items, staging="local_path", manifest_source="local")
    plane.run(timeout=240)
    expect_exit(ctx, plane, 0, "facts are dropped for size, not fatal")
    report = _report(ctx, plane)
    ctx.expect(len(plane.report_raw) <= MAX_RESULT_BYTES, expected="<= 1 MiB", actual="%d bytes" % len(plane.report_raw))
    facts = report.get("facts") or []
    want = [{"key": "input", "value": i.relpath} for i in items[:len(facts)]]
    ctx.expect(0 < len(facts) < len(items) and facts == want,
               expected="a non-empty prefix of the facts, in input order", actual="%d facts" % len(facts))
    ctx.expect("facts_omitted" in (report.get("summary") or {}), expected="summary.facts_omitted",
               actual="summary keys %s" % sorted(report.get("summary") or {}))


@check("result.fact-rules", clauses=["STEP-RESULT-3"], level="MUST",
       title="names that break the fact rules are declined and counted, and the run goes on",
       fakes="inputs named with 600 characters, and with a DEL character, beside a normal one",
       expected="exit 0; only the normal name is a fact; summary.facts_not_claimed counts 2")
def _(ctx):
    items = [Input("ok.csv", b"1\n"), Input("L" * 600, b"2\n"), Input("del\x7fname.csv", b"3\n")]
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "a declined fact is not an error")
    report = _report(ctx, plane)
    ctx.expect(report.get("facts") == [{"key": "input", "value": "ok.csv"}],
               expected="facts: ok.csv only", actual="facts %s" % json.dumps(report.get("facts"))[:200])
    note = (report.get("summary") or {}).get("facts_not_claimed") or ""
    ctx.expect(note.startswith("not claimed as search facts: ") and "2" in note,
               expected="summary.facts_not_claimed counting 2", actual="%r" % note)


@check("result.on-failure", clauses=["STEP-RESULT-4"], level="MUST",
       title="a failed run still uploads result.json, before the marker, with the facts so far",
       fakes="input 2 of 2 fails its hash pin", expected="result.json POST precedes the marker POST; fact for input 1")
def _(ctx):
    items = csv_inputs(2)
    items[1].sha256_pin = "f" * 64
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 10, "a wrong pin is permanent")
    posts = [(ex.key or "").rsplit("/", 1)[-1] for ex in plane.posts()]
    ctx.expect(RESULT_NAME in posts and posts.index(RESULT_NAME) < posts.index("__lspo_complete.json")
               if "__lspo_complete.json" in posts else False,
               expected="result.json POST then the marker POST", actual="POST order %s" % posts)
    report = _report(ctx, plane)
    ctx.expect(report.get("facts") == [{"key": "input", "value": items[0].relpath}],
               expected="the fact of input 1", actual="facts %s" % report.get("facts"))


@check("result.failure-upload-fails", clauses=["STEP-RESULT-4", "STEP-MARKER-5"], level="MUST",
       title="when the failure-path result.json is refused, the marker does not list it",
       fakes="input 2 fails its pin; the store answers result.json with 500",
       expected="exit 10; failed marker without result.json")
def _(ctx):
    items = csv_inputs(2)
    items[1].sha256_pin = "f" * 64
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.status(500, s3_code="InternalError"), Match(method="POST", key="*/" + RESULT_NAME))
    plane.run()
    expect_exit(ctx, plane, 10, "the original failure's code")
    expect_marker(ctx, plane, "failed", 10)
    expect_not_listed(ctx, plane, [RESULT_NAME], "upload first, then inventory on the failure path")
