"""The probe vocabulary: requests held to it, answers bound to what was read (SESSION-PROBE-1 to -9).

These are the platform's promises about probes, whatever a node computes: a request off the
vocabulary is refused before any read (an acquisition costs an admission slot and a crawl); an
answer is an observation of the bytes this probe acquired, bound to them by their hash and
length and to the sandbox by its policy digest; the relations of SESSION-PROBE-7 hold; a
`source_inspect` shows no value; and a probe's failure is the probe's, never the session's.

Every check here judges shapes, bindings, relations and codes, recomputed from the content the
plane served and the policy the contract defines, never the reference prober's values: a copy
whose `[EDIT]` prober infers other types or aggregates its own way passes them all (D28).
Most checks queue many probes in one session, so one run judges a whole list of variants.
"""

import json
import os
import re

from conformance.checks import check
from conformance.checks.session._common import (creates, describe_run, expect_summary, file_digest, first_report,
                                                names_probe_code, policy_digest, relation_problems, run_to_exit,
                                                store_requests)
from conformance.planes.session import TEMPLATES, deploy

# The plane's probe timeout (conformance/planes/session/plane.py PROBE_TIMEOUT_S): the one the
# sandbox policy of a default run is computed from.
PLANE_PROBE_TIMEOUT_S = 10
CITIES = ["city", "population", "note"]
CITY_ROWS = [["Oslo", 709037, None], ["Bergen", 291940, "port"], ["Trondheim", 212660, None],
             ["Tromsø", 77544, "arctic"], ["Bodø", 52803, None]]
A_UUID = "0b7e3c1a-9d2f-4e6b-8a5c-1f0e9d8c7b6a"


def _code_of(plane, probe_id):
    doc = first_report(plane, probe_id) or {}
    return doc.get("outcome"), doc.get("failure_code")


def _expect_failed_reports(ctx, plane, expected, why):
    """Each probe of expected ({label: (probe_id, code)}) reported failed with its code."""
    wrong = []
    for label, (probe_id, code) in expected.items():
        got = _code_of(plane, probe_id)
        if got != ("failed", code):
            wrong.append("%s: %s/%s" % (label, got[0], got[1]))
    ctx.expect(not wrong, expected="each probe reported failed with its code (%s)" % ", ".join(
                   sorted(set(code for _p, code in expected.values()))),
               actual=lambda: "%s (%s)" % ("; ".join(wrong[:6]), describe_run(plane)), diagnosis=why)


def _invalid_requests(source_id):
    """(label, kind, request) of requests off the vocabulary (SESSION-PROBE-2)."""
    deep = {"op": "eq", "column": "city", "value": "Oslo"}
    for _ in range(8):
        deep = {"op": "not", "arg": deep}  # 9 levels
    many = {"op": "and", "args": [{"op": "and", "args": [{"op": "is_null", "column": "city"}] * 8}] * 8}  # 73
    sid = {"source_id": source_id}
    return [
        ("unknown kind", "row_count", dict(sid)),
        ("missing source_id", "sample_rows", {"limit": 5}),
        ("source_id not canonical", "source_inspect", {"source_id": source_id.upper()}),
        ("unknown key", "source_inspect", dict(sid, offset=1)),
        ("request not an object", "source_inspect", [source_id]),
        ("scan_rows 0", "source_inspect", dict(sid, scan_rows=0)),
        ("scan_rows MAX_SCAN_ROWS + 1", "profile_columns", dict(sid, scan_rows=deploy.MAX_SCAN_ROWS + 1)),
        ("scan_rows true", "source_inspect", dict(sid, scan_rows=True)),
        ("offset -1", "sample_rows", dict(sid, offset=-1)),
        ("offset MAX_SAMPLE_OFFSET + 1", "sample_rows", dict(sid, offset=deploy.MAX_SAMPLE_OFFSET + 1)),
        ("limit 0", "sample_rows", dict(sid, limit=0)),
        ("limit MAX_SAMPLE_LIMIT + 1", "sample_rows", dict(sid, limit=deploy.MAX_SAMPLE_LIMIT + 1)),
        ("limit 2.5", "sample_rows", dict(sid, limit=2.5)),
        ("columns empty", "sample_rows", dict(sid, columns=[])),
        ("columns repeated", "profile_columns", dict(sid, columns=["city", "city"])),
        ("column name empty", "sample_rows", dict(sid, columns=[""])),
        ("column name 1025 characters", "sample_rows", dict(sid, columns=["c" * 1025])),
        ("MAX_PROFILE_COLUMNS + 1 columns", "profile_columns",
         dict(sid, columns=["c%d" % i for i in range(deploy.MAX_PROFILE_COLUMNS + 1)])),
        ("expression missing", "evaluate_expression", dict(sid)),
        ("expression as text", "evaluate_expression", dict(sid, expression="count(*)")),
        ("aggregate median", "evaluate_expression", dict(sid, expression={"aggregate": "median", "column": "city"})),
        ("sum without column", "evaluate_expression", dict(sid, expression={"aggregate": "sum"})),
        ("expression extra key", "evaluate_expression", dict(sid, expression={"aggregate": "count", "limit": 1})),
        ("operator like", "evaluate_expression", dict(sid, expression={"aggregate": "count", "where": {
            "op": "like", "column": "city", "value": "O%"}})),
        ("literal null", "evaluate_expression", dict(sid, expression={"aggregate": "count", "where": {
            "op": "eq", "column": "city", "value": None}})),
        ("literal 1025 characters", "evaluate_expression", dict(sid, expression={"aggregate": "count", "where": {
            "op": "eq", "column": "city", "value": "x" * 1025}})),
        ("comparison extra key", "evaluate_expression", dict(sid, expression={"aggregate": "count", "where": {
            "op": "eq", "column": "city", "value": "Oslo", "args": []}})),
        ("junction of 17", "evaluate_expression", dict(sid, expression={"aggregate": "count", "where": {
            "op": "or", "args": [{"op": "is_null", "column": "city"}] * 17}})),
        ("junction of 0", "evaluate_expression", dict(sid, expression={"aggregate": "count", "where": {
            "op": "and", "args": []}})),
        ("9 levels deep", "evaluate_expression", dict(sid, expression={"aggregate": "count", "where": deep})),
        ("73 predicates", "evaluate_expression", dict(sid, expression={"aggregate": "count", "where": many})),
        ("request over 16384 bytes", "profile_columns", dict(sid, columns=["%03d" % i + "c" * 300
                                                                             for i in range(64)])),
    ]


@check("probe.vocabulary", clauses=["SESSION-PROBE-1", "SESSION-PROBE-2"], level="MUST",
       title="a request off the vocabulary is PROBE_REQUEST_INVALID, before any read",
       fakes="one session; a probe per fault of the vocabulary (unknown kind, missing or unknown key, every "
             "range, a boolean or a fraction for an integer, columns empty, repeated or too many, an expression "
             "off the grammar or beyond its limits, a request over 16 KiB), then a valid one",
       expected="each reported failed with PROBE_REQUEST_INVALID and no acquisition create for any; the valid "
                "probe after them succeeds")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    source = plane.add_source(columns=CITIES, rows=CITY_ROWS)
    expected = dict((label, (plane.probe(kind, request=request), "PROBE_REQUEST_INVALID"))
                    for label, kind, request in _invalid_requests(source.source_id))
    good = plane.probe("source_inspect", source)
    # Act
    run_to_exit(plane, [p for p, _c in expected.values()] + [good])
    # Assert
    _expect_failed_reports(ctx, plane, expected, "each of these requests breaks the vocabulary of SESSION-PROBE-2, "
                                                 "and is refused with PROBE_REQUEST_INVALID")
    made = creates(plane)
    ctx.expect(len(made) == 1, expected="one acquisition create in all (the valid probe's)",
               actual=lambda: "%d creates (%s)" % (len(made), describe_run(plane)),
               diagnosis="a refused request is refused before any read: an acquisition costs an admission slot")
    ctx.expect(_code_of(plane, good)[0] == "succeeded", expected="the valid probe after them succeeds",
               actual=lambda: "%s/%s" % _code_of(plane, good), diagnosis="a refused probe leaves the session as it was")
    expect_summary(ctx, plane, terminal_state="closed")


@check("probe.scope-and-channel", clauses=["SESSION-PROBE-1"], level="MUST",
       title="the request, then the scope, then the channel, each before any read",
       fakes="two sessions. One whose lease allows every path: a probe of a source outside source_ids, and one "
             "both invalid and out of scope. One whose lease allows no acquisition template: an in-scope probe, "
             "an out-of-scope one and an invalid out-of-scope one",
       expected="PROBE_SOURCE_OUT_OF_SCOPE for the out-of-scope probes, PROBE_REQUEST_INVALID for the invalid "
                "ones, PROBE_SOURCE_CHANNEL_UNAVAILABLE for the in-scope probe without a channel; no create")
def _(ctx):
    outside = "6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4b"
    # Arrange, act: every path allowed
    plane = ctx.plane()
    plane.add_source(columns=CITIES, rows=CITY_ROWS)
    expected = {"out of scope": (plane.probe("source_inspect", outside), "PROBE_SOURCE_OUT_OF_SCOPE"),
                "invalid and out of scope": (plane.probe("sample_rows", outside, limit=0), "PROBE_REQUEST_INVALID")}
    run_to_exit(plane, [p for p, _c in expected.values()])
    _expect_failed_reports(ctx, plane, expected, "the kind and the request are judged first, then the scope (D3)")
    ctx.expect(not creates(plane), expected="no acquisition create",
               actual=lambda: "%d creates" % len(creates(plane)),
               diagnosis="a probe refused by its request or its scope costs no admission slot")
    # Arrange, act: no acquisition template in the lease
    no_channel = [t for verb, (_m, t, _s) in TEMPLATES.items() if verb not in ("acquire", "read")]
    plane = ctx.plane(allowed_paths=no_channel)
    source = plane.add_source(columns=CITIES, rows=CITY_ROWS)
    expected = {"in scope": (plane.probe("source_inspect", source), "PROBE_SOURCE_CHANNEL_UNAVAILABLE"),
                "out of scope": (plane.probe("source_inspect", outside), "PROBE_SOURCE_OUT_OF_SCOPE"),
                "invalid": (plane.probe("source_inspect", source, offset=3), "PROBE_REQUEST_INVALID")}
    run_to_exit(plane, [p for p, _c in expected.values()])
    # Assert
    _expect_failed_reports(ctx, plane, expected, "without both acquisition templates a probe cannot read; the "
                                                 "request and the scope are still judged before the channel")
    ctx.expect(not creates(plane) and not plane.control.calls("read"), expected="no acquisition request",
               actual=lambda: describe_run(plane), diagnosis="SESSION-CALLBACK-2: a template not allowed is never sent")
    expect_summary(ctx, plane, terminal_state="closed")


def _valid_requests(source_id):
    """(label, kind, request) of requests at the vocabulary's edges: each one is answered."""
    sid = {"source_id": source_id}
    deep = {"op": "eq", "column": "city", "value": "Oslo"}
    for _ in range(7):
        deep = {"op": "not", "arg": deep}  # 8 levels: the limit
    many = {"op": "or", "args": [{"op": "and", "args": [{"op": "not_null", "column": "note"}] * 8}] * 7}  # 64
    return [
        ("source_inspect, defaults", "source_inspect", dict(sid)),
        ("source_inspect, scan_rows 1", "source_inspect", dict(sid, scan_rows=1)),
        ("sample_rows, defaults", "sample_rows", dict(sid)),
        ("sample_rows, offset 1000000, limit 200", "sample_rows", dict(sid, offset=1000000, limit=200)),
        ("sample_rows, columns reordered", "sample_rows", dict(sid, columns=["note", "city"], limit=1)),
        ("profile_columns, defaults", "profile_columns", dict(sid)),
        ("profile_columns, scan_rows 100000", "profile_columns", dict(sid, scan_rows=100000, columns=["population"])),
        ("count, no column", "evaluate_expression", dict(sid, expression={"aggregate": "count"})),
        ("count of a column", "evaluate_expression", dict(sid, expression={"aggregate": "count", "column": "note"})),
        ("sum with a fraction literal", "evaluate_expression", dict(sid, expression={
            "aggregate": "sum", "column": "population", "where": {"op": "gt", "column": "population",
                                                                   "value": 100000.5}})),
        ("max, 8 levels deep", "evaluate_expression", dict(sid, expression={"aggregate": "max", "column": "city",
                                                                             "where": deep})),
        ("min, 64 predicates", "evaluate_expression", dict(sid, expression={"aggregate": "min", "column": "city",
                                                                             "where": many})),
        ("avg, literal of 1024 characters", "evaluate_expression", dict(sid, expression={
            "aggregate": "avg", "column": "population", "where": {"op": "ne", "column": "city", "value": "x" * 1024}})),
        ("every operator", "evaluate_expression", dict(sid, expression={"aggregate": "count", "where": {
            "op": "or", "args": [{"op": op, "column": "population", "value": 1} for op in ("eq", "ne", "lt", "le", "gt",
                                                                                           "ge")]
            + [{"op": "is_null", "column": "note"}, {"op": "not", "arg": {"op": "not_null", "column": "note"}},
               {"op": "eq", "column": "note", "value": True}]}})),
    ]


@check("probe.normalized-answered", clauses=["SESSION-PROBE-2", "SESSION-PROBE-7"], level="MUST",
       title="requests at the vocabulary's edges are answered, with the relations every result keeps",
       fakes="one session; a probe per valid request at an edge of the vocabulary (defaults, scan_rows 1 and "
             "100000, offset 1000000, limit 200, expressions 8 deep, with 64 predicates, a 1024-character and a "
             "fractional literal, every operator)",
       expected="each succeeds; its result has the kind's shape and keeps SESSION-PROBE-7's relations against the "
                "normalized request and the served content")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(columns=CITIES, rows=CITY_ROWS)
    probes = [(label, kind, request, plane.probe(kind, request=request))
              for label, kind, request in _valid_requests(source.source_id)]
    run_to_exit(plane, [p for _l, _k, _r, p in probes])
    wrong = []
    for label, kind, request, probe_id in probes:
        doc = first_report(plane, probe_id) or {}
        if doc.get("outcome") != "succeeded":
            wrong.append("%s: %s/%s" % (label, doc.get("outcome"), doc.get("failure_code")))
            continue
        problems = relation_problems(kind, request, doc.get("result"), CITIES, CITY_ROWS)
        if problems:
            wrong.append("%s: %s" % (label, "; ".join(problems[:2])))
    ctx.expect(not wrong, expected="every valid request answered, with its kind's shape and relations",
               actual=lambda: "; ".join(wrong[:5]),
               diagnosis="the node answers the normalized request (defaults filled in) of any request the "
                         "vocabulary admits")
    expect_summary(ctx, plane, terminal_state="closed")


# Column names and literals that are code in some language: a node that evaluates, formats,
# matches or shells any of them would make the marker file or a process.
def _snippets(marker):
    return [
        "__import__('os').system('touch %s')" % marker,
        "$(touch %s)" % marker,
        "`touch %s`; touch %s" % (marker, marker),
        "'; DROP TABLE data; --",
        "{0.__class__.__mro__}",
        "%s%s%n",
        ".*(a+)+$",
        "open('%s', 'w').write('x')" % marker,
    ]


@check("probe.expression-data", clauses=["SESSION-PROBE-3"], level="MUST",
       title="an expression is data: literals and names that are code change nothing",
       fakes="a source whose column names are Python, shell, SQL, format and regular-expression snippets, each "
             "of which would create a marker file if run; probes that compare, aggregate and sample them",
       expected="every probe succeeds with an ordinary result; no marker file exists; no process but the node's "
                "own interpreters ran")
def _(ctx):
    marker = os.path.join(ctx.tmpdir("markers"), "ran")
    names = _snippets(marker)
    rows = [[name + " value"] * len(names) for name in names]
    plane = ctx.plane()
    source = plane.add_source(columns=names, rows=rows)
    where = {"op": "or", "args": [{"op": "eq", "column": name, "value": literal}
                                  for name, literal in zip(names, reversed(names))]}
    requests = [("evaluate_expression", {"expression": {"aggregate": "count", "where": where}}),
                ("evaluate_expression", {"expression": {"aggregate": "max", "column": names[0], "where": {
                    "op": "ne", "column": names[1], "value": names[2]}}}),
                ("sample_rows", {"columns": names[::-1], "limit": 3}),
                ("profile_columns", {"columns": names[:4]})]
    probes = [(kind, dict(request, source_id=source.source_id)) for kind, request in requests]
    ids = [plane.probe(kind, request=request) for kind, request in probes]
    run_to_exit(plane, ids)
    wrong = []
    for (kind, request), probe_id in zip(probes, ids):
        doc = first_report(plane, probe_id) or {}
        problems = (relation_problems(kind, request, doc.get("result"), names, rows)
                    if doc.get("outcome") == "succeeded" else ["%s/%s" % (doc.get("outcome"), doc.get("failure_code"))])
        wrong += ["%s: %s" % (kind, p) for p in problems[:1]]
    ctx.expect(not wrong, expected="every probe over code-like names and literals answered as ordinary data",
               actual=lambda: "; ".join(wrong[:4]), diagnosis="a literal is only ever compared with a cell, and a name "
                                                              "only ever names a column")
    ctx.expect(not os.path.exists(marker), expected="no marker file", actual="%s exists" % marker,
               diagnosis="a string of the request was run as code")
    seen_processes = plane.runs[-1].watch.processes()  # the node first
    # The node file as the node was started (not this harness's idea of it: `-- python3.9 worker.py` names it so);
    # its children name it by its absolute path, which ends with that spelling.
    own = ctx.node.path or next((cell for cell in (seen_processes[0].argvs[:1] or [[]])[0][1:]
                                 if cell.endswith(".py")), "") if seen_processes else ""
    own = os.path.normpath(own).lstrip("./") if own else ""
    digest = file_digest(ctx.node.path) if ctx.node.path else None
    strangers = [" ".join(argv[:4]) for seen in seen_processes for argv in seen.argvs
                 if argv and not any(own and os.path.normpath(cell).endswith(own) for cell in argv)
                 and not names_probe_code(argv, plane.runs[-1].scratch, digest)]  # D54: its bytecode
    ctx.expect(not strangers, expected="no process but the node file's own", actual="; ".join(strangers[:3]),
               diagnosis="a string of the request reached a shell or another interpreter")


@check("probe.observation", clauses=["SESSION-PROBE-4"], level="MUST",
       title="every answer is read from this probe's own acquisition and download",
       fakes="two sources; two probes of the first, one of the second, each answered ready at once",
       expected="before each successful report: a create for its source and a download of that source's bundle, "
                "both after the previous report; content_sha256 is the SHA-256 of the content served")
def _(ctx):
    plane = ctx.plane()
    first = plane.add_source(columns=CITIES, rows=CITY_ROWS)
    second = plane.add_source(columns=["n"], rows=[[1], [2], [3]], data_format="jsonl")
    order = [(first, plane.probe("source_inspect", first)), (first, plane.probe("sample_rows", first, limit=2)),
             (second, plane.probe("profile_columns", second))]
    run_to_exit(plane, [p for _s, p in order])
    since = 0.0
    for source, probe_id in order:
        report = plane.control.reports(probe_id)[0]
        doc = report.doc or {}
        made = [c for c in creates(plane, source.source_id) if since <= c.t < report.t]
        fetched = [ex for ex in store_requests(plane, source) if since <= ex.t_start < report.t]
        result = doc.get("result") or {}
        ctx.expect(doc.get("outcome") == "succeeded" and made and fetched
                   and result.get("content_sha256") == source.content_sha256,
                   expected="probe %s: a create and a download of its source since the last report, and the "
                            "content's SHA-256 in its result" % probe_id,
                   actual=lambda: "outcome %s, %d create(s), %d download(s), content_sha256 %s" % (
                       doc.get("outcome"), len(made), len(fetched),
                       "matches" if result.get("content_sha256") == source.content_sha256 else "differs"),
                   diagnosis="each probe reads the content an acquisition delivered for it, never a copy kept "
                             "from an earlier probe or metadata")
        since = report.t


@check("probe.column-unknown", clauses=["SESSION-PROBE-5"], level="MUST",
       title="a column the content lacks is PROBE_COLUMN_UNKNOWN wherever it is named, after the read",
       fakes="one session; probes naming a missing column in sample_rows' and profile_columns' columns, in "
             "expression.column and in a predicate nested in a junction and a negation",
       expected="each reported failed with PROBE_COLUMN_UNKNOWN, each after a create (it is judged on the content)")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(columns=CITIES, rows=CITY_ROWS)
    nested = {"op": "and", "args": [{"op": "not_null", "column": "city"},
                                    {"op": "not", "arg": {"op": "lt", "column": "nope", "value": 3}}]}
    expected = {
        "sample_rows columns": plane.probe("sample_rows", source, columns=["city", "nope"]),
        "profile_columns columns": plane.probe("profile_columns", source, columns=["nope"]),
        "expression.column": plane.probe("evaluate_expression", source, expression={"aggregate": "sum",
                                                                                    "column": "nope"}),
        "count's column": plane.probe("evaluate_expression", source, expression={"aggregate": "count",
                                                                                 "column": "nope"}),
        "nested predicate": plane.probe("evaluate_expression", source, expression={"aggregate": "count",
                                                                                  "where": nested}),
    }
    run_to_exit(plane, list(expected.values()))
    _expect_failed_reports(ctx, plane, dict((k, (p, "PROBE_COLUMN_UNKNOWN")) for k, p in expected.items()),
                           "a column is one of the content's columns, wherever the request names it (D9)")
    made = len(creates(plane))
    ctx.expect(made >= len(expected), expected="a create for each probe (columns are judged on the content)",
               actual="%d creates" % made, diagnosis="the columns are known only from the content, after the read")
    expect_summary(ctx, plane, terminal_state="closed")


@check("probe.result-bound", clauses=["SESSION-PROBE-6"], level="MUST",
       title="each result is bound to the content read, its format and the sandbox policy",
       fakes="a CSV and a JSON-lines source; one probe of each kind; the node runs with a probe timeout of "
             "7.5 s and a network policy attestation, which the sandbox policy carries",
       expected="every result validates against probe-result, with the request's kind and source, the SHA-256 "
                "and length of the content served, the receipt's data_format, the digest of the policy the "
                "contract defines for that configuration, and at most 65536 canonical bytes")
def _(ctx):
    attestation = "attest:egress-policy/v4@2026-12"
    timeout_s = 7.5
    plane = ctx.plane()
    csv = plane.add_source(columns=CITIES, rows=[[str(c) if c is not None else "" for c in row] for row in CITY_ROWS],
                           data_format="csv")
    jsonl = plane.add_source(columns=CITIES, rows=CITY_ROWS, data_format="jsonl")
    probes = []
    for source in (csv, jsonl):
        for kind, request in (("source_inspect", {}), ("sample_rows", {"limit": 2}), ("profile_columns", {}),
                              ("evaluate_expression", {"expression": {"aggregate": "count"}})):
            probes.append((source, kind, dict(request, source_id=source.source_id),
                           plane.probe(kind, source, **request)))
    run_to_exit(plane, [p for _s, _k, _r, p in probes],
                env={"MR_SESSION_WORKER_PROBE_TIMEOUT_SECONDS": "7.5",
                     "MOSTLYRIGHT_EXTERNAL_NETWORK_POLICY_ATTESTATION": attestation})
    wanted_policy = policy_digest(timeout_s, attestation)
    wrong = []
    for source, kind, request, probe_id in probes:
        doc = first_report(plane, probe_id) or {}
        result = doc.get("result")
        if doc.get("outcome") != "succeeded" or not isinstance(result, dict):
            wrong.append("%s of %s: %s/%s" % (kind, source.data_format, doc.get("outcome"), doc.get("failure_code")))
            continue
        expected = {"probe_kind": kind, "source_id": source.source_id, "content_sha256": source.content_sha256,
                    "content_bytes": len(source.bundle.content), "data_format": source.data_format,
                    "sandbox_policy_digest": wanted_policy, "schema_version": deploy.PROBE_SCHEMA_VERSION}
        off = ["%s %r (expected %r)" % (k, result.get(k), v) for k, v in sorted(expected.items())
               if result.get(k) != v]
        off += relation_problems(kind, request, result, CITIES, CITY_ROWS)[:1]
        size = len(json.dumps(result, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
        off += ["%d canonical bytes" % size] if size > deploy.PROBE_RESULT_MAX_BYTES else []
        if off:
            wrong.append("%s of %s: %s" % (kind, source.data_format, "; ".join(off[:2])))
    ctx.expect(not wrong, expected="every result bound to its request, its content and the sandbox policy",
               actual=lambda: "; ".join(wrong[:4]),
               diagnosis="the bindings are recomputed from the content served and the policy of SESSION-ISOLATION-5 "
                         "(cpu_seconds %d, timeout_ms %d, the attestation)" % (9, 7500))


def _relation_probes(source_id, columns):
    sid = {"source_id": source_id}
    return [
        ("sample_rows past the end", "sample_rows", dict(sid, offset=50, limit=5)),
        ("sample_rows across the end", "sample_rows", dict(sid, offset=8, limit=10)),
        ("sample_rows inside", "sample_rows", dict(sid, offset=2, limit=3, columns=[columns[70], columns[1]])),
        ("sample_rows, the default columns", "sample_rows", dict(sid, limit=1)),
        ("sample_rows of wide cells", "sample_rows", dict(sid, limit=200, columns=[columns[0]])),
        ("sample_rows over the result bound", "sample_rows", dict(sid, offset=1, limit=200)),
        ("source_inspect, scan_rows 4", "source_inspect", dict(sid, scan_rows=4)),
        ("profile_columns, the default columns", "profile_columns", dict(sid, scan_rows=3)),
        ("profile_columns, requested order", "profile_columns", dict(sid, columns=[columns[3], columns[0]])),
        ("count with a predicate", "evaluate_expression", dict(sid, scan_rows=6, expression={
            "aggregate": "count", "where": {"op": "is_null", "column": columns[2]}})),
        ("sum with a predicate", "evaluate_expression", dict(sid, expression={
            "aggregate": "sum", "column": columns[1], "where": {"op": "gt", "column": columns[1], "value": 3}})),
    ]


@check("probe.relations", clauses=["SESSION-PROBE-7"], level="MUST",
       title="whatever a node computes, its results keep SESSION-PROBE-7's relations",
       fakes="a source of 12 rows and 72 columns (nulls, mixed types, string cells of 300 and 2000 characters); "
             "windows before, across and past the end, one too large to fit the result bound, default and "
             "requested columns, scan_rows below the row count, predicates",
       expected="each succeeds; rows_scanned within its bounds; sample_rows' columns, row widths, row count and "
                "truncated as the window dictates; profile counts adding up; count equal to rows_matched")
def _(ctx):
    columns = ["wide"] + ["c%02d" % i for i in range(1, 72)]
    rows = []
    for r in range(12):  # string cells of 300 characters: 5 rows of 64 columns pass PROBE_RESULT_MAX_BYTES
        row = ["w%02d" % r + "x" * 2000] + [(r * i) if i % 3 == 0 else None if (r + i) % 4 == 0
                                           else "s%d" % r + "y" * 300 for i in range(1, 72)]
        rows.append(row)
    plane = ctx.plane()
    source = plane.add_source(columns=columns, rows=rows)
    probes = [(label, kind, request, plane.probe(kind, request=request))
              for label, kind, request in _relation_probes(source.source_id, columns)]
    run_to_exit(plane, [p for _l, _k, _r, p in probes])
    wrong = []
    for label, kind, request, probe_id in probes:
        doc = first_report(plane, probe_id) or {}
        problems = (relation_problems(kind, request, doc.get("result"), columns, rows)
                    if doc.get("outcome") == "succeeded" else ["%s/%s" % (doc.get("outcome"), doc.get("failure_code"))])
        wrong += ["%s: %s" % (label, p) for p in problems[:2]]
    ctx.expect(not wrong, expected="every result keeps the relations of SESSION-PROBE-7",
               actual=lambda: "; ".join(wrong[:4]),
               diagnosis="these relations are what a person and the control plane rely on, whatever the prober")


@check("probe.inspect-no-value", clauses=["SESSION-PROBE-8"], level="MUST",
       title="source_inspect shows names and types, never a value",
       fakes="a source whose every cell holds a sentinel string (and one column of numbers); source_inspect "
             "with the defaults and with scan_rows 1",
       expected="both succeed and neither the results nor the report bodies hold the sentinel")
def _(ctx):
    sentinel = "SENTINEL" + ctx.rng.choice("QWXZ") + "%08d" % ctx.rng.randrange(10 ** 8)
    columns = ["name", "kind", "amount"]
    amounts = [731984520117 + i for i in range(6)]  # twelve digits: never a chance match inside a digest
    rows = [["%s-%d" % (sentinel, i), sentinel, amount] for i, amount in enumerate(amounts)]
    plane = ctx.plane()
    source = plane.add_source(columns=columns, rows=rows)
    ids = [plane.probe("source_inspect", source), plane.probe("source_inspect", source, scan_rows=1)]
    run_to_exit(plane, ids)
    for probe_id in ids:
        doc = first_report(plane, probe_id) or {}
        bodies = [c.body for c in plane.control.reports(probe_id)]
        ctx.expect(doc.get("outcome") == "succeeded", expected="source_inspect succeeds",
                   actual="%s/%s" % (doc.get("outcome"), doc.get("failure_code")), diagnosis="a plain source")
        leaked = [b for b in bodies if sentinel.encode() in b or any(b"%d" % a in b for a in amounts)]
        ctx.expect(not leaked, expected="no cell value in the source_inspect report",
                   actual="the report holds a cell value", diagnosis="values are seen only through sample_rows, so "
                                                                    "that every look at them is on the event stream")


@check("probe.failure-continues", clauses=["SESSION-PROBE-9"], level="MUST",
       title="a probe's failure is the probe's: reported with a code, and the session goes on",
       fakes="one session; probes that fail in the request, the scope, the acquisition (settled failed with a "
             "code), the columns, interleaved with probes that succeed",
       expected="each failed probe reported failed with a code, each followed by the next claim; the session "
                "closes normally with the counts of what was delivered")
def _(ctx):
    plane = ctx.plane()
    good = plane.add_source(columns=CITIES, rows=CITY_ROWS)
    bad = plane.add_source(columns=CITIES, rows=CITY_ROWS, fail_code="RESEARCH_SOURCE_UNACQUIRABLE")
    ids = [plane.probe("source_inspect", good, offset=1),
           plane.probe("source_inspect", good),
           plane.probe("source_inspect", A_UUID),
           plane.probe("profile_columns", bad),
           plane.probe("sample_rows", good, columns=["nope"]),
           plane.probe("evaluate_expression", good, expression={"aggregate": "count"})]
    run_to_exit(plane, ids)
    outcomes = [_code_of(plane, p) for p in ids]
    wanted = ["failed", "succeeded", "failed", "failed", "failed", "succeeded"]
    ok = [o[0] for o in outcomes] == wanted and all(
        (o[1] is None) == (o[0] == "succeeded") and (o[1] is None or re.match(r"^[A-Z][A-Z0-9_]{2,127}\Z", o[1]))
        for o in outcomes)
    ctx.expect(ok, expected="outcomes %s, each failure with a code" % ", ".join(wanted),
               actual=lambda: ", ".join("%s/%s" % o for o in outcomes),
               diagnosis="a probe's failure is reported with one code and ends nothing but the probe")
    claims = plane.control.claims()
    reports = [plane.control.reports(p)[0] for p in ids]
    late = [i for i, report in enumerate(reports) if not any(c.t > report.t for c in claims)]
    ctx.expect(not late, expected="a claim after every report", actual="none after probe #%s" % late[:1],
               diagnosis="after a report, failed or not, the next claim goes out")
    summary = expect_summary(ctx, plane, terminal_state="closed")
    counts = (summary["probes_answered"], summary["probes_failed"])
    ctx.expect(counts == (2, 4), expected="probes_answered 2, probes_failed 4", actual="%d, %d" % counts,
               diagnosis="the summary counts the probes delivered, by outcome (SESSION-REPORT-3)")
