"""result.json: shape, the 1 MiB ceiling, fact rules, and the failure path.

These judge what the platform reads, whatever facts and metrics a step's work
claims; what the reference node itself reports is checked in work.py.
"""

import json
import re

from conformance import schema
from conformance.checks import check
from conformance.checks.step._common import (
    contract_schema,
    Input, Match, RESULT_NAME, csv_inputs, expect_exit, expect_listed, expect_marker, expect_not_listed, faults)
from conformance.planes.step import IDENTITY

MAX_RESULT_BYTES = 1 << 20

# Inputs of the fact-heavy run: with one 400-character fact per input (as the
# reference node claims) the facts alone pass 1 MiB.
FACT_HEAVY_INPUTS = 2600

# summary.facts_omitted and facts_not_claimed, as STEP-RESULT-2 and -3 word them.
_OMITTED_RE = re.compile(r"^(\d+) of (\d+) facts dropped")
# facts_not_claimed: the prefix, then one clause per non-zero counter, joined
# by "; ", each beginning with its count. What follows a count is the node's
# own wording (the reference node names the counter; the upstream described
# the rule): nothing on the platform reads it, so only work.py judges it.
_NOT_CLAIMED_PREFIX = "not claimed as search facts: "
_CLAUSE_RE = re.compile(r"[1-9][0-9]*\b")


def expect_report(ctx, plane):
    """result.json was collected and is a JSON object; returns it."""
    ctx.expect(isinstance(plane.report, dict), expected="result.json in staging, a JSON object",
               actual="absent" if plane.report_raw is None else "not a JSON object",
               diagnosis="write result.json under the staging prefix in every run that has an identity, the "
                         "failure path included" if plane.report_raw is None else
                         "result.json is one JSON object, serialised with json.dumps")
    return plane.report


def expect_valid_report(ctx, plane):
    """result.json is valid against the contract's schema (fact rules included); returns it."""
    report = expect_report(ctx, plane)
    problems = schema.validate(report, contract_schema("result"))
    ctx.expect(not problems, expected="valid against contract/schemas/step/result.schema.json",
               actual="; ".join(problems[:5]),
               diagnosis="build result.json with the schema's members only: integer metrics, params and attempt in "
                         "summary, facts that obey the platform's rules")
    return report


def fact_heavy_plane(ctx):
    """Run the node over FACT_HEAVY_INPUTS local inputs with 400-character names; (plane, items)."""
    # Two path components: a single 400-character file name is over NAME_MAX.
    items = [Input(("%05d-" % i) + "n" * 194 + "/" + "m" * 199, b"%d\n" % i, source="local")
             for i in range(FACT_HEAVY_INPUTS)]
    plane = ctx.step_plane(inputs=items, staging="local_path", manifest_source="local")
    plane.run(timeout=240)
    expect_exit(ctx, plane, 0, "facts are dropped for size, not fatal")
    return plane, items


@check("result.shape", clauses=["STEP-RESULT-1", "STEP-RESULT-3"], level="MUST",
       title="result.json has the contract's shape: version, the work's metrics, params echoed, valid facts",
       fakes="three CSV inputs; manifest params {'greeting': 'hello'}",
       expected="schema-valid (metrics of integers, facts that obey the rules); params and attempt echoed; "
                "serialised with sorted keys and indent 2")
def _(ctx):
    items = csv_inputs(3, rows=7)
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "a healthy run")
    report = expect_valid_report(ctx, plane)
    summary = report.get("summary") or {}
    ctx.expect(summary.get("params") == {"greeting": "hello"} and summary.get("attempt") == IDENTITY["attempt"],
               expected="summary.params echoed exactly, summary.attempt %d" % IDENTITY["attempt"],
               actual="summary %s" % json.dumps(summary)[:200],
               diagnosis="echo the manifest's params exactly and the identity's attempt in result.json's summary")
    ctx.expect(plane.report_raw.decode("utf-8") == json.dumps(report, sort_keys=True, indent=2),
               expected="serialised as json.dumps(document, sort_keys=True, indent=2)",
               actual=plane.report_raw[:120],
               diagnosis="serialise result.json with json.dumps(document, sort_keys=True, indent=2)")


@check("result.attempt-from-identity", clauses=["STEP-RESULT-1", "STEP-MANIFEST-4"], level="MUST",
       title="summary.attempt is the identity's attempt, from the environment when the manifest has none (D29)",
       fakes="a manifest without attempt; LSPO_ATTEMPT=7 in the environment",
       expected="exit 0; marker attempt 7 and summary.attempt 7 (never null, never the manifest's raw value)")
def _(ctx):
    manifest = dict((k, v) for k, v in IDENTITY.items() if k != "attempt")
    manifest.update(schema_version=1, params={})
    plane = ctx.step_plane(inputs=csv_inputs(1), manifest=manifest, extra_env={"LSPO_ATTEMPT": "7"})
    plane.run()
    expect_exit(ctx, plane, 0, "the environment supplies the attempt")
    marker = expect_marker(ctx, plane, "succeeded", 0)
    summary = (expect_report(ctx, plane).get("summary") or {})
    ctx.expect(marker.get("attempt") == 7 and summary.get("attempt") == 7,
               expected="marker attempt 7 and summary.attempt 7",
               actual="marker attempt %r, summary.attempt %r" % (marker.get("attempt"), summary.get("attempt")),
               diagnosis="settle the attempt once (manifest, else LSPO_ATTEMPT) and write that value in both "
                         "the marker and result.json")


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
    report = expect_report(ctx, plane)
    ctx.expect(len(plane.report_raw) <= MAX_RESULT_BYTES, expected="<= 1 MiB",
               actual="%d bytes" % len(plane.report_raw),
               diagnosis="measure result.json after serialising and reduce it until it fits in 1 MiB: params first, "
                         "then facts")
    summary = report.get("summary") or {}
    want_keys = sorted(params)[:64]
    ctx.expect(summary.get("params") is None and "params_omitted" in summary
               and summary.get("params_keys") == want_keys and summary.get("params_count") == 300,
               expected="params null, params_omitted, params_keys = first 64 sorted keys, params_count 300",
               actual="summary keys %s; params_count %r" % (sorted(summary), summary.get("params_count")),
               diagnosis="when params push result.json over 1 MiB, set params to null, say so in params_omitted, and "
                         "keep the first 64 sorted keys in params_keys and their count in params_count")
    ctx.expect("facts_omitted" not in summary, expected="no fact dropped: the params gave way first",
               actual="summary.facts_omitted %r" % summary.get("facts_omitted"),
               diagnosis="drop the params echo before any fact: facts give way only when the document still does not "
                         "fit")


@check("result.facts-ceiling", clauses=["STEP-RESULT-2"], level="MUST",
       title="when facts alone pass 1 MiB they are halved until the document fits, and the summary says so",
       fakes="local mode; %d inputs with 400-character names (a node that claims a fact per name passes "
             "1 MiB)" % FACT_HEAVY_INPUTS,
       expected="exit 0; result.json <= 1 MiB and valid; when facts were dropped, facts_omitted "
                "'<dropped> of <total> facts dropped' and the kept count is the total halved, at least 1")
def _(ctx):
    plane, _items = fact_heavy_plane(ctx)
    report = expect_valid_report(ctx, plane)
    ctx.expect(len(plane.report_raw) <= MAX_RESULT_BYTES, expected="<= 1 MiB", actual="%d bytes" % len(plane.report_raw),
               diagnosis="measure result.json after serialising and halve the facts until it fits in 1 MiB")
    omitted = (report.get("summary") or {}).get("facts_omitted")
    if omitted is None:
        ctx.note("no fact dropped: the document fits as it is")
        return
    found = _OMITTED_RE.match(omitted) if isinstance(omitted, str) else None
    ctx.expect(found is not None, expected="facts_omitted beginning '<dropped> of <total> facts dropped'",
               actual="facts_omitted %r" % (omitted,),
               diagnosis="when facts are dropped, say '<dropped> of <total> facts dropped' at the start of "
                         "summary.facts_omitted")
    dropped, total = int(found.group(1)), int(found.group(2))
    kept = len(report.get("facts") or [])
    halvings = [total >> k for k in range(1, max(total.bit_length(), 1) + 1)]
    ctx.expect(kept == total - dropped and kept >= 1 and kept in halvings,
               expected="the first half kept, halved again until it fits: one of %s, at least 1"
                        % halvings[:4],
               actual="%d facts kept of %d (%d said dropped)" % (kept, total, dropped),
               diagnosis="keep len // 2 facts, measure, and repeat (STEP-RESULT-2)")


# Inputs whose names break the fact rules, for a node that claims facts from names.
FACT_RULE_INPUTS = (("ok.csv", b"1\n"), ("L" * 600, b"2\n"), ("del\x7fname.csv", b"3\n"))


@check("result.fact-rules", clauses=["STEP-RESULT-3"], level="MUST",
       title="facts that break the platform's rules are declined, counted in one sentence, and the run goes on",
       fakes="inputs named with 600 characters, and with a DEL character, beside a normal one",
       expected="exit 0; every fact in result.json obeys the rules; facts_not_claimed, when present, is one "
                "sentence of one clause per non-zero counter, each beginning with its count")
def _(ctx):
    items = [Input(name, data) for name, data in FACT_RULE_INPUTS]
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "a declined fact is not an error")
    expect_valid_report(ctx, plane)
    note = (plane.report.get("summary") or {}).get("facts_not_claimed")
    if note is None:
        return
    clauses = note[len(_NOT_CLAIMED_PREFIX):].split("; ") if isinstance(note, str) else []
    ctx.expect(isinstance(note, str) and note.startswith(_NOT_CLAIMED_PREFIX) and "\n" not in note
               and 1 <= len(clauses) <= 3 and all(_CLAUSE_RE.match(c) for c in clauses),
               expected="'not claimed as search facts: <n> ...' with one to three clauses joined by '; ', each "
                        "beginning with its non-zero count",
               actual="facts_not_claimed %r" % (note[:300] if isinstance(note, str) else note,),
               diagnosis="say in one facts_not_claimed sentence, 'not claimed as search facts: ' then one clause per "
                         "non-zero counter joined by '; ', each beginning with its count")


@check("result.on-failure", clauses=["STEP-RESULT-4"], level="MUST",
       title="a failed run still uploads result.json, before the marker, and lists it once accepted",
       fakes="input 2 of 2 fails its hash pin",
       expected="result.json POST precedes the marker POST; it is valid and listed in the failed marker")
def _(ctx):
    items = csv_inputs(2)
    items[1].sha256_pin = "f" * 64
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 10, "a wrong pin is permanent")
    posts = [(ex.key or "").rsplit("/", 1)[-1] for ex in plane.collector.posts()]
    ctx.expect(RESULT_NAME in posts and posts.index(RESULT_NAME) < posts.index("__lspo_complete.json")
               if "__lspo_complete.json" in posts else False,
               expected="result.json POST then the marker POST", actual="POST order %s" % posts,
               diagnosis="write result.json on the failure path too, before the marker" if RESULT_NAME not in posts else
               "end every run that has an identity with its marker" if "__lspo_complete.json" not in posts else
               "write result.json before the marker: the marker is the last write")
    expect_valid_report(ctx, plane)
    expect_marker(ctx, plane, "failed", 10)
    expect_listed(ctx, plane, [RESULT_NAME], "accepted on the failure path, then inventoried")


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


@check("result.ambiguous-listed", clauses=["STEP-RESULT-4", "STEP-MARKER-5", "STEP-OUTPUT-6"], level="MUST",
       title="a result.json whose write ended without an answer is listed, and never sent again (D34, D13)",
       fakes="the store commits result.json's POST and resets instead of answering: on the normal path of a "
             "healthy run; then (second run) on the failure path, input 2 of 2 failing its pin",
       expected="exit 1, then 10; one result.json POST in each run; each failed marker lists result.json")
def _(ctx):
    healthy = ctx.step_plane(inputs=csv_inputs(1))
    failing_items = csv_inputs(2)
    failing_items[1].sha256_pin = "f" * 64
    failing = ctx.step_plane(inputs=failing_items)
    for plane, code, path in ((healthy, 1, "normal path"), (failing, 10, "failure path")):
        plane.store.add_fault(faults.accept_then_reset(), Match(method="POST", key="*/" + RESULT_NAME, first=1))
        plane.run()
        expect_exit(ctx, plane, code, "result.json on the %s: stored, unanswered" % path)
        ctx.expect(len(plane.collector.posts(RESULT_NAME)) == 1,
                   expected="one result.json POST on the %s (never re-sent after an ambiguous end)" % path,
                   actual="%d POSTs" % len(plane.collector.posts(RESULT_NAME)),
                   diagnosis="a result.json write that ended without an answer may be stored: never send it again, "
                             "list it in the marker and end as failed")
        expect_marker(ctx, plane, "failed", code)
        expect_listed(ctx, plane, [RESULT_NAME], "on the %s the store may hold it, so salvage must see it" % path)
