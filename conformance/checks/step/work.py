"""The reference node's example work: a copy of each input, its name, metrics, facts.

These checks cite the clauses of the contract's "Example work" section, so they
run only with --reference: they hold nodes/hello_node.py to the upstream
hello-node's behaviour. A step that does other work is judged on the platform's
obligations alone (every other module), which never look at what the work wrote.
"""

from conformance.checks import check
from conformance.checks.step._common import (
    KEY_PREFIX, RESULT_NAME, Input, csv_inputs, expect_exit, expect_marker)
from conformance.checks.step.output import clashing_inputs
from conformance.checks.step.result import (
    FACT_HEAVY_INPUTS, FACT_RULE_INPUTS, MAX_RESULT_BYTES, expect_report, fact_heavy_plane)


def _expect_copies(ctx, plane, items, relpaths):
    """Each relpath holds its input's bytes, re-read from staging."""
    for item, relpath in zip(items, relpaths):
        held = plane.collector.hash_stored(relpath)
        ctx.expect(held == (item.true_sha256, item.true_size),
                   expected="%s holds the bytes of input %r" % (relpath, item.display_name),
                   actual="stored: %s" % (held,), diagnosis="the reference node copies each input byte for byte")


@check("work.copy", clauses=["STEP-WORK-1", "STEP-WORK-2"], level="MUST",
       title="three inputs are copied to outputs/<name> and published on port output",
       fakes="a healthy store; three small CSV inputs; then the same in local_path mode",
       expected="exit 0; outputs/<name> holds each input's bytes; produced_ports output/report")
def _(ctx):
    for staging in ("presigned_post", "local_path"):
        source = "local" if staging == "local_path" else "get"
        items = [Input(i.relpath, i.data, source=source) for i in csv_inputs(3)]
        plane = ctx.step_plane(inputs=items, staging=staging, manifest_source="local" if source == "local" else "get")
        plane.run()
        expect_exit(ctx, plane, 0, "a healthy run succeeds (%s)" % staging)
        marker = expect_marker(ctx, plane, "succeeded", 0)
        relpaths = ["outputs/" + i.relpath for i in items]
        _expect_copies(ctx, plane, items, relpaths)
        ports = marker.get("produced_ports")
        want = {"output": relpaths, "report": [RESULT_NAME]}
        ctx.expect(ports == want, expected="produced_ports %s" % want, actual="produced_ports %s" % ports,
                   diagnosis="the copies go on port output; result.json only on port report")


@check("work.name-clash", clauses=["STEP-WORK-2"], level="MUST",
       title="clashing names get the port directory, then a counter in the last component",
       fakes="data.csv on ports a, b and b again; file on port my.port three times",
       expected="outputs/data.csv, outputs/b/data.csv, outputs/b/data-2.csv, outputs/file, "
                "outputs/my.port/file, outputs/my.port/file-2")
def _(ctx):
    items = clashing_inputs()
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "clashing names are told apart, not refused")
    want = ["outputs/data.csv", "outputs/b/data.csv", "outputs/b/data-2.csv",
            "outputs/file", "outputs/my.port/file", "outputs/my.port/file-2"]
    got = plane.collector.data_relpaths()
    ctx.expect(got == want, expected="relpaths %s" % want, actual="relpaths %s" % got,
               diagnosis="the counter goes before the last dot of the final component only (D5)")
    _expect_copies(ctx, plane, items, want)


@check("work.names", clauses=["STEP-WORK-3", "STEP-WORK-5"], level="MUST",
       title="an input's name is relpath, else name, else input-<index>",
       fakes="three inputs: relpath only, name only, neither",
       expected="outputs/r.csv, outputs/n.csv, outputs/input-2; facts with those names")
def _(ctx):
    items = [Input("r.csv", b"1\n"), Input("", b"2\n", name="n.csv"), Input("", b"3\n")]
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "every input has a name")
    want = ["outputs/r.csv", "outputs/n.csv", "outputs/input-2"]
    got = plane.collector.data_relpaths()
    ctx.expect(got == want, expected="relpaths %s" % want, actual="relpaths %s" % got,
               diagnosis="name each copy outputs/<name>, where the name is the input's relpath, else its name, else "
                         "input-<index>")
    values = [f.get("value") for f in (plane.report or {}).get("facts", [])]
    ctx.expect(values == ["r.csv", "n.csv", "input-2"], expected="facts r.csv, n.csv, input-2",
               actual="facts %s" % values,
               diagnosis="claim one input fact per copy, valued with the name the copy was given, in input order")


@check("work.metrics-and-facts", clauses=["STEP-WORK-4", "STEP-WORK-5"], level="MUST",
       title="result.json counts files, bytes and lines, and has one input fact per copy",
       fakes="three CSV inputs of seven rows each, then one of 1.6 MiB (its lines span two chunks)",
       expected="metrics files 4, total_bytes and lines exact; facts in input order")
def _(ctx):
    items = csv_inputs(3, rows=7) + [Input("long.csv", b"1,2\n" * (400 << 10))]
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "a healthy run")
    report = expect_report(ctx, plane)
    want_metrics = {"files": len(items), "total_bytes": sum(i.true_size for i in items),
                    "lines": sum(i.data.count(b"\n") for i in items)}
    ctx.expect(report.get("metrics") == want_metrics, expected="metrics %s" % want_metrics,
               actual="metrics %s" % report.get("metrics"),
               diagnosis="count the copies in files, their bytes in total_bytes and their newline bytes in lines, "
                         "across chunk boundaries")
    want = [{"key": "input", "value": i.relpath} for i in items]
    ctx.expect(report.get("facts") == want, expected="facts %s" % want, actual="facts %s" % report.get("facts"),
               diagnosis="claim one fact {key: input, value: <relpath>} per copy, in input order")


@check("work.facts-on-failure", clauses=["STEP-WORK-5", "STEP-WORK-4"], level="MUST",
       title="a failed run's result.json holds the facts and metrics of the copies accepted so far",
       fakes="input 2 of 2 fails its sha256 pin", expected="exit 10; facts name input 1 only; metrics count it alone")
def _(ctx):
    items = csv_inputs(2)
    items[1].sha256_pin = "f" * 64
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 10, "a wrong pin is permanent")
    report = expect_report(ctx, plane)
    ctx.expect(report.get("facts") == [{"key": "input", "value": items[0].relpath}],
               expected="the fact of input 1 only", actual="facts %s" % report.get("facts"),
               diagnosis="on a failure, result.json still holds the facts of the copies accepted so far, and only "
                         "those")
    want_metrics = {"files": 1, "total_bytes": items[0].true_size, "lines": items[0].data.count(b"\n")}
    ctx.expect(report.get("metrics") == want_metrics, expected="metrics %s" % want_metrics,
               actual="metrics %s" % report.get("metrics"),
               diagnosis="on a failure, the metrics count the copies accepted so far, and only those")


@check("work.copy-before-next", clauses=["STEP-WORK-1"], level="MUST",
       title="each input's copy is written before the next input is requested",
       fakes="five inputs", expected="GET then POST of its copy, per input, in list order")
def _(ctx):
    items = csv_inputs(5, rows=3)
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "a healthy run")
    seen = [(ex.method, ex.key) for ex in plane.store.transcript
            if ex.key and (ex.key.startswith("inputs/") or "/outputs/" in ex.key)]
    want = []
    for item in items:
        want += [("GET", item.key), ("POST", KEY_PREFIX + "outputs/" + item.relpath)]
    ctx.expect(seen == want, expected="GET then POST per input, in list order",
               actual="; ".join("%s %s" % pair for pair in seen),
               diagnosis="write each input's copy before requesting the next input: GET, then POST its copy, input by "
                         "input")


@check("work.progress-phase", clauses=["STEP-WORK-6"], level="SHOULD",
       title="the reference node reports its work as 'copying inputs'",
       fakes="three inputs", expected="every progress line before 1.0 has phase 'copying inputs'")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(3))
    plane.run()
    expect_exit(ctx, plane, 0, "a healthy run")
    phases = [doc.get("phase") for _t, doc, _raw in plane.progress() if isinstance(doc, dict)
              and doc.get("fraction") != 1.0]
    ctx.expect(phases and all(p == "copying inputs" for p in phases), expected="phase 'copying inputs'",
               actual="phases %s" % phases,
               diagnosis="report the example work's progress with the phase 'copying inputs' on every line before the "
                         "last")


@check("work.user-agent", clauses=["STEP-WORK-7"], level="SHOULD",
       title="every request carries the lspo-hello-node User-Agent",
       fakes="a healthy run", expected="User-Agent starting 'lspo-hello-node/' on every request")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(2))
    plane.run()
    agents = {dict((k.lower(), v) for k, v in ex.headers).get("user-agent") for ex in plane.store.transcript}
    ctx.expect(agents and all((a or "").startswith("lspo-hello-node/") for a in agents),
               expected="User-Agent lspo-hello-node/...", actual="%s" % sorted(str(a) for a in agents),
               diagnosis="send the User-Agent 'lspo-hello-node/<version>' on every request")


@check("work.facts-ceiling-order", clauses=["STEP-WORK-5"], level="MUST",
       title="facts kept under the 1 MiB ceiling are the first ones, in input order",
       fakes="local mode; %d inputs with 400-character names (facts about 1.1 MiB)" % FACT_HEAVY_INPUTS,
       expected="facts a non-empty prefix of the inputs' names, in order")
def _(ctx):
    plane, items = fact_heavy_plane(ctx)
    report = expect_report(ctx, plane)
    ctx.expect(len(plane.report_raw) <= MAX_RESULT_BYTES, expected="<= 1 MiB", actual="%d bytes" % len(plane.report_raw),
               diagnosis="measure result.json after serialising and halve the facts until it fits in 1 MiB")
    facts = report.get("facts") or []
    want = [{"key": "input", "value": i.relpath} for i in items[:len(facts)]]
    ctx.expect(0 < len(facts) < len(items) and facts == want,
               expected="a non-empty prefix of the facts, in input order", actual="%d facts" % len(facts),
               diagnosis="when facts are dropped for size, keep the first ones in input order (halve the list, never "
                         "sample it)")


@check("work.declined-facts", clauses=["STEP-WORK-5", "STEP-RESULT-3"], level="MUST",
       title="of three names, the two that break the fact rules are declined and counted",
       fakes="inputs named with 600 characters, and with a DEL character, beside ok.csv",
       expected="exit 0; facts: ok.csv only; facts_not_claimed '... 2 unusable'")
def _(ctx):
    items = [Input(name, data) for name, data in FACT_RULE_INPUTS]
    plane = ctx.step_plane(inputs=items)
    plane.run()
    expect_exit(ctx, plane, 0, "a declined fact is not an error")
    report = expect_report(ctx, plane)
    ctx.expect(report.get("facts") == [{"key": "input", "value": "ok.csv"}],
               expected="facts: ok.csv only", actual="facts %s" % str(report.get("facts"))[:200],
               diagnosis="decline a fact whose value breaks the platform's rules (empty, over 512 characters, a "
                         "control character) and claim the others")
    note = (report.get("summary") or {}).get("facts_not_claimed")
    ctx.expect(note == "not claimed as search facts: 2 unusable", expected="'not claimed as search facts: 2 unusable'",
               actual="%r" % (note,),
               diagnosis="count the declined facts in facts_not_claimed as 'not claimed as search facts: <n> unusable'")


# One fact past the platform's 10,000 (MAX_RESULT_FACTS), after one unusable
# name: the only way the reference node, whose one fact key is valid, declines
# facts under two counters, so the order of the summary sentence shows.
FACT_CAP = 10000


@check("work.fact-cap", clauses=["STEP-WORK-5", "STEP-RESULT-3"], level="MUST",
       title="10,000 facts at most; the rest counted as over_cap, after unusable in the summary sentence",
       fakes="local mode, in memory; %d tiny inputs: the first named with a DEL character, then %d valid names"
             % (FACT_CAP + 2, FACT_CAP + 1),
       expected="exit 0; facts: the first 10,000 valid names, in order; facts_not_claimed "
                "'not claimed as search facts: 1 unusable; 1 over_cap'")
def _(ctx):
    items = [Input("bad\x7fname", b"0\n", source="local")]
    items += [Input("f%05d" % i, b"", source="local") for i in range(1, FACT_CAP + 2)]
    plane = ctx.step_plane(inputs=items, staging="local_path", manifest_source="local", in_memory=True)
    plane.run(timeout=240)
    expect_exit(ctx, plane, 0, "declined facts are not an error")
    report = expect_report(ctx, plane)
    facts = report.get("facts") or []
    want = [{"key": "input", "value": item.relpath} for item in items[1:FACT_CAP + 1]]
    ctx.expect(facts == want, expected="the first %d valid names' facts, in input order" % FACT_CAP,
               actual="%d facts, first %s, last %s" % (len(facts), facts[:1], facts[-1:]),
               diagnosis="check the cap first: the 10,001st fact is declined as over_cap (STEP-RESULT-3)")
    note = (report.get("summary") or {}).get("facts_not_claimed")
    ctx.expect(note == "not claimed as search facts: 1 unusable; 1 over_cap",
               expected="'not claimed as search facts: 1 unusable; 1 over_cap'", actual="%r" % (note,),
               diagnosis="one clause per non-zero counter, in the order unusable, bad_key, over_cap")
