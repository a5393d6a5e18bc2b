"""The reference prober [example work]: the exact answers of SESSION-WORK-1 to -7.

These checks judge the reference node's own arithmetic, not the platform: how cells are typed,
types inferred, previews cut, values compared, aggregated, profiled and trimmed (D28). A copy
whose `[EDIT]` prober computes differently replaces these clauses and keeps the rest; so the
checks run only with --reference. Each runs the node file's `--probe-child` mode directly with a
probe input (SESSION-ISOLATION-7 promises a checker may), the way the node starts its children
(`python -I -S NODE --probe-child`, an empty environment, `/` as working directory), and compares
stdout byte for byte with the canonical result the clauses give, or stderr with the one failure
line. The expected documents are written out here from the clauses, case by case; the contract's
own examples (contract/examples/session/valid/) are matched byte for byte in work.exact-output.
"""

import concurrent.futures
import hashlib
import json
import os

from conformance.checks import check
from conformance.checks.session._common import policy_digest
from conformance.childmode import run_node_mode
from conformance.clauses import REPO_ROOT
from conformance.planes.session.control import canonical
from conformance.planes.session.sources import rows_content

SOURCE_ID = "3c4d5e6f-7a8b-4c9d-8e1f-2a3b4c5d6e7f"
# The sandbox policy digest the inputs carry: the contract's default probe timeout (45 s). The child
# restates it; nothing in these checks depends on its value.
POLICY_DIGEST = policy_digest(45)
EXAMPLES = os.path.join(REPO_ROOT, "contract", "examples", "session", "valid")
DEFAULTS = {"scan_rows": 10000, "offset": 0, "limit": 20}
KEYS = {"source_inspect": ("scan_rows",), "sample_rows": ("offset", "limit"), "profile_columns": ("scan_rows",),
        "evaluate_expression": ("scan_rows",)}
PREVIEW = "\u2026"  # SESSION-WORK-1: the marker after a string cut to 256 characters
# Probe child runs a check makes at once: each run is mostly an interpreter's start and the
# node file's compilation (most of a CPU-second on a loaded 2-core machine), so two at a time.
CHILD_RUNS_AT_ONCE = 2


def _content(columns, rows):
    return rows_content(columns, rows)


def _header(kind, request, content, data_format):
    normalized = dict(request, source_id=SOURCE_ID)
    for key in KEYS[kind]:
        normalized.setdefault(key, DEFAULTS[key])
    return {"schema_version": "session-probe-input.v1", "probe_kind": kind, "request": normalized,
            "source_id": SOURCE_ID, "data_format": data_format,
            "content_sha256": hashlib.sha256(content).hexdigest(), "content_bytes": len(content),
            "sandbox_policy_digest": POLICY_DIGEST, "result_max_bytes": 65536}


def _envelope(header):
    envelope = dict((key, header[key]) for key in ("probe_kind", "source_id", "content_sha256", "content_bytes",
                                                   "data_format", "sandbox_policy_digest"))
    envelope["schema_version"] = "1.0.0"
    return envelope


def _run(ctx, header, content):
    return run_node_mode(ctx, ["--probe-child"], canonical(header) + b"\n" + content, {}, what="probe child mode")


def _judge(ctx, label, run, wanted):
    """wanted: the result's bytes, or ("failed", code)."""
    if isinstance(wanted, tuple):
        line = canonical({"code": wanted[1], "status": "failed"}) + b"\n"
        ctx.expect(run.returncode == 1 and run.stdout == b"" and run.stderr == line,
                   expected="%s: exit 1, nothing on stdout, stderr %s" % (label, line.decode()),
                   actual="exit %d, stdout %r, stderr %r" % (run.returncode, run.stdout[:300], run.stderr[:200]),
                   diagnosis="the reference prober refuses this input with the code the clause names")
        return
    ctx.expect(run.returncode == 0 and run.stderr == b"" and run.stdout == wanted,
               expected="%s: exit 0 and stdout %s" % (label, _shorten(wanted)),
               actual="exit %d, stdout %s, stderr %r" % (run.returncode, _shorten(run.stdout), run.stderr[:200]),
               diagnosis="the reference prober's answer differs from what the clauses give, byte for byte")


def _shorten(data, limit=600):
    text = data.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + "... (%d bytes)" % len(data)


def _runs(ctx, inputs):
    """The CompletedProcess of each (header, content), run CHILD_RUNS_AT_ONCE at a time: each run
    starts an interpreter and compiles the node file, most of a second on a loaded machine."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=CHILD_RUNS_AT_ONCE) as pool:
        futures = [pool.submit(_run, ctx, header, content) for header, content in inputs]
        return [future.result() for future in futures]


def _cases(ctx, cases):
    """Run and judge each (label, kind, request, columns, rows or content bytes, data_format, keys or failure)."""
    prepared = []
    for label, kind, request, columns, rows, data_format, wanted in cases:
        content = rows if isinstance(rows, bytes) else _content(columns, rows)
        header = _header(kind, request, content, data_format)
        expected = wanted if isinstance(wanted, tuple) else canonical(dict(_envelope(header), **wanted))
        prepared.append((label, header, content, expected))
    runs = _runs(ctx, [(header, content) for _l, header, content, _e in prepared])
    for (label, _h, _c, expected), run in zip(prepared, runs):
        _judge(ctx, label, run, expected)


def _sample(rows, scanned, columns):
    return {"columns": columns, "rows": rows, "rows_scanned": scanned, "truncated": False}


# ---------------------------------------------------------------- SESSION-WORK-1

CSV_TYPING = [("", None), ("0", 0), ("-0", 0), ("42", 42), ("-17", -17), ("007", "007"),
              ("9007199254740991", 9007199254740991), ("9007199254740992", "9007199254740992"),
              ("-9007199254740991", -9007199254740991), ("1.50", 1.5), ("-0.0", -0.0), ("2.5e3", 2500.0),
              ("1.0", 1.0), ("1e5", "1e5"), ("1.0e999", "1.0e999"), (".5", ".5"), ("true", True), ("false", False),
              ("True", "True"), (" 1", " 1"), ("NaN", "NaN"), ("x" * 300, "x" * 256 + PREVIEW), ("y" * 256, "y" * 256)]
JSONL_HELD = [("42", "42"), ("", ""), (True, True), (None, None), (-5, -5), ("z" * 257, "z" * 256 + PREVIEW)]


@check("work.cells", clauses=["SESSION-WORK-1"], level="MUST",
       title="cells typed from CSV text, held from JSON lines, previews cut, types inferred",
       fakes="probe inputs run through --probe-child: sample_rows over a CSV column of every typing case and a "
             "JSON-lines one; source_inspect over CSV and JSON-lines columns of each inferred type; contents "
             "without a header, with a header that is not a list of strings, with a row of another width",
       expected="the typed previews and inferred types the clause gives, byte for byte; PROBE_PARSE_EMPTY for "
                "the malformed contents")
def _(ctx):
    types_csv = (["i", "n", "f", "s", "m", "b", "bi", "e"],
                 [["1", "1", "1.5", "a", "1", "true", "true", ""], ["2", "2.5", "2.5", "b", "a", "false", "1", ""]])
    types_jsonl = (["ib", "t", "nul", "bb"], [[1, "x", None, True], [True, "y", None, None]])
    _cases(ctx, [
        ("CSV typing", "sample_rows", {"limit": 200}, ["v"], [[text] for text, _ in CSV_TYPING], "csv",
         _sample([[cell] for _, cell in CSV_TYPING], len(CSV_TYPING), ["v"])),
        ("JSON lines held", "sample_rows", {"limit": 200}, ["v"], [[value] for value, _ in JSONL_HELD], "jsonl",
         _sample([[cell] for _, cell in JSONL_HELD], len(JSONL_HELD), ["v"])),
        ("CSV types", "source_inspect", {}, types_csv[0], types_csv[1], "csv", _inspect(types_csv[0], [
            "integer", "number", "number", "string", "mixed", "boolean", "mixed", "null"], 2)),
        ("JSON-lines types", "source_inspect", {}, types_jsonl[0], types_jsonl[1], "jsonl", _inspect(
            types_jsonl[0], ["mixed", "string", "null", "boolean"], 2)),
        ("no header line", "source_inspect", {}, None, b"", "jsonl", ("failed", "PROBE_PARSE_EMPTY")),
        ("header of numbers", "source_inspect", {}, None, b"[1,2]\n[1,2]\n", "jsonl",
         ("failed", "PROBE_PARSE_EMPTY")),
        ("a row of another width", "profile_columns", {}, None, b'["a","b"]\n["x","y"]\n["z"]\n', "jsonl",
         ("failed", "PROBE_PARSE_EMPTY")),
    ])


def _inspect(columns, types, scanned, shown=64):
    pairs = [[name, kind] for name, kind in zip(columns, types)]
    return {"rows_scanned": scanned, "truncated": False,
            "schema_digest": hashlib.sha256(canonical(pairs)).hexdigest(),
            "columns": [{"name": name, "inferred_type": kind} for name, kind in pairs[:shown]]}


# ---------------------------------------------------------------- SESSION-WORK-2

@check("work.source-inspect", clauses=["SESSION-WORK-2"], level="MUST",
       title="source_inspect: the scanned rows' types, the first 64 columns, the digest over all",
       fakes="a JSON-lines content of 66 columns and 3 rows whose third row would change every type; "
             "source_inspect with scan_rows 2, and with the default",
       expected="rows_scanned 2 (then 3); the first 64 columns with the types of the scanned rows; schema_digest "
                "the digest of [[name, type], ...] over all 66")
def _(ctx):
    columns = ["k%02d" % i for i in range(66)]
    first = [[i if i % 3 == 0 else "s%d" % i if i % 3 == 1 else None for i in range(66)] for _ in range(2)]
    third = [["t"] * 66]
    scanned_types = ["integer" if i % 3 == 0 else "string" if i % 3 == 1 else "null" for i in range(66)]
    all_types = ["mixed" if i % 3 == 0 else "string" for i in range(66)]
    _cases(ctx, [
        ("scan_rows 2", "source_inspect", {"scan_rows": 2}, columns, first + third, "jsonl",
         _inspect(columns, scanned_types, 2)),
        ("every row", "source_inspect", {}, columns, first + third, "jsonl", _inspect(columns, all_types, 3)),
    ])


# ---------------------------------------------------------------- SESSION-WORK-3

def _truncated_case():
    """64 columns of 300-character strings, 12 rows: the rows that fit, dropped from the end (SESSION-WORK-3)."""
    columns = ["w%02d" % i for i in range(64)]
    rows = [["r%02d" % r + "v" * 297 for _ in range(64)] for r in range(12)]
    previews = [[cell[:256] + PREVIEW for cell in row] for row in rows]
    header = _header("sample_rows", {"limit": 200}, _content(columns, rows), "jsonl")
    keep = list(previews)
    keys = _sample(keep, 12, columns)
    while len(canonical(dict(_envelope(header), **keys))) > 65536 and keep:
        keep.pop()
        keys["truncated"] = True
    return columns, rows, dict(keys, rows=keep)


@check("work.sample-rows", clauses=["SESSION-WORK-3"], level="MUST",
       title="sample_rows: the window over all rows, rows_scanned as rows read (D10), the last rows dropped to fit",
       fakes="a 4-row content: a window inside with columns reordered, one across the end, one past the end, "
             "scan_rows playing no part; 12 rows of 64 300-character cells, limit 200",
       expected="the window's previews in the requested order; rows_scanned offset (or the row count) plus the "
                "window's length; for the wide rows, the first rows that fit in 65536 bytes and truncated true")
def _(ctx):
    columns = ["a", "b", "c"]
    rows = [[1, "x", None], [2, "y", True], [3, "z", False], [4, "w", None]]
    wide_columns, wide_rows, wide = _truncated_case()
    _cases(ctx, [
        ("inside, reordered", "sample_rows", {"offset": 1, "limit": 2, "columns": ["c", "a"]}, columns, rows, "jsonl",
         _sample([[True, 2], [False, 3]], 3, ["c", "a"])),
        ("across the end", "sample_rows", {"offset": 3, "limit": 5}, columns, rows, "jsonl",
         _sample([[4, "w", None]], 4, columns)),
        ("past the end", "sample_rows", {"offset": 10, "limit": 5}, columns, rows, "jsonl", _sample([], 4, columns)),
        ("the default window", "sample_rows", {}, columns, rows, "jsonl", _sample(rows, 4, columns)),
        ("rows over the result bound", "sample_rows", {"limit": 200}, wide_columns, wide_rows, "jsonl", wide),
    ])


# ---------------------------------------------------------------- SESSION-WORK-4

def _profile(entries, scanned):
    return {"rows_scanned": scanned, "truncated": False, "columns": entries}


def _entry(name, kind, non_null, nulls, distinct, extremes=None):
    entry = {"name": name, "inferred_type": kind, "non_null": non_null, "nulls": nulls, "distinct": distinct}
    if extremes is not None:
        entry["minimum"], entry["maximum"] = extremes
    return entry


@check("work.profile", clauses=["SESSION-WORK-4"], level="MUST",
       title="profile_columns: counts, distinct previews and, when ordered, the extremes",
       fakes="a JSON-lines content of strings, integers, booleans, a mixed column, an all-null column and long "
             "strings sharing their first 256 characters; a CSV content of integers and floats; scan_rows 2",
       expected="the clause's counts; distinct over previews (the two long strings count once); minimum and "
                "maximum by code point, by value, false before true; none for the mixed and null columns")
def _(ctx):
    columns = ["s", "n", "b", "m", "z", "long"]
    rows = [["b", 3, True, 1, None, "L" * 300], ["B", -2, False, "1", None, "L" * 256 + "M" * 10],
            [None, 3, None, 2, None, "K"], ["a", None, True, None, None, None]]
    cut = "L" * 256 + PREVIEW
    every = [_entry("s", "string", 3, 1, 3, ("B", "b")), _entry("n", "integer", 3, 1, 2, (-2, 3)),
             _entry("b", "boolean", 3, 1, 2, (False, True)), _entry("m", "mixed", 3, 1, 3),
             _entry("z", "null", 0, 4, 0), _entry("long", "string", 3, 1, 2, ("K", cut))]
    _cases(ctx, [
        ("every column", "profile_columns", {}, columns, rows, "jsonl", _profile(every, 4)),
        ("requested order", "profile_columns", {"columns": ["long", "s"]}, columns, rows, "jsonl",
         _profile([every[5], every[0]], 4)),
        ("scan_rows 2", "profile_columns", {"scan_rows": 2, "columns": ["n", "m"]}, columns, rows, "jsonl",
         _profile([_entry("n", "integer", 2, 0, 2, (-2, 3)), _entry("m", "mixed", 2, 0, 2)], 2)),
        ("integers and floats", "profile_columns", {}, ["x"], [["1"], ["2.5"], ["0.5"], [""]], "csv",
         _profile([_entry("x", "number", 3, 1, 3, (0.5, 2.5))], 4)),
    ])


# ---------------------------------------------------------------- SESSION-WORK-5

PREDICATE_ROWS = (["n", "s", "b"], [[1, "a", True], [2, "B", False], [None, None, None], [10, "10", True],
                                    [-3, "a", False]])
PREDICATES = [
    ("eq, an integer and a fraction", {"op": "eq", "column": "n", "value": 1.0}, 1),
    ("a number and a string never compare", {"op": "or", "args": [
        {"op": "eq", "column": "n", "value": "10"}, {"op": "lt", "column": "s", "value": 5}]}, 0),
    ("booleans are neither numbers nor ordered", {"op": "or", "args": [
        {"op": "eq", "column": "b", "value": 1}, {"op": "eq", "column": "n", "value": True},
        {"op": "gt", "column": "b", "value": False}]}, 0),
    ("eq, booleans", {"op": "eq", "column": "b", "value": True}, 2),
    ("ne skips nulls", {"op": "ne", "column": "n", "value": 1}, 3),
    ("lt, a fraction", {"op": "lt", "column": "n", "value": 2.5}, 3),
    ("ge, strings by code point", {"op": "ge", "column": "s", "value": "a"}, 2),
    ("is_null", {"op": "is_null", "column": "s"}, 1),
    ("and", {"op": "and", "args": [{"op": "gt", "column": "n", "value": 0}, {"op": "eq", "column": "s", "value": "a"}]},
     1),
    ("or", {"op": "or", "args": [{"op": "is_null", "column": "n"}, {"op": "eq", "column": "s", "value": "B"}]}, 2),
    ("not of a false comparison on a null", {"op": "not", "arg": {"op": "eq", "column": "s", "value": "a"}}, 3),
]


@check("work.predicates", clauses=["SESSION-WORK-5"], level="MUST",
       title="predicates: numbers by value, strings by code point, booleans as themselves, nulls false",
       fakes="a JSON-lines content of 5 rows (numbers, strings, booleans, a null row); a count per predicate",
       expected="rows_matched as the clause's comparison rules give, for each operator and each pairing of types")
def _(ctx):
    columns, rows = PREDICATE_ROWS
    _cases(ctx, [(label, "evaluate_expression", {"expression": {"aggregate": "count", "where": where}}, columns, rows,
                  "jsonl", {"rows_scanned": 5, "truncated": False, "aggregate": "count", "value": matched,
                            "rows_matched": matched})
                 for label, where, matched in PREDICATES])


# ---------------------------------------------------------------- SESSION-WORK-6

def _aggregate(aggregate, value, matched, scanned, column=None):
    keys = {"rows_scanned": scanned, "truncated": False, "aggregate": aggregate, "value": value,
            "rows_matched": matched}
    if column is not None:
        keys["column"] = column
    return keys


@check("work.aggregates", clauses=["SESSION-WORK-6"], level="MUST",
       title="aggregates: count, sum, avg, min, max over the collected cells; null, never 0, over none",
       fakes="a JSON-lines content of integers, strings, nulls; a CSV content of fractions; sums past 2^53 and "
             "past the largest float; aggregates with predicates matching nothing, and scan_rows 2",
       expected="the clause's values (integer sums within range, float otherwise, avg a float); null with no "
                "collected cell; PROBE_AGGREGATE_NOT_NUMERIC for a string sum; PROBE_FAILED for an infinite sum")
def _(ctx):
    columns = ["x", "y", "z"]
    rows = [[3, "p", None], [4, "q", None], [None, "r", None], [5, "p", None]]
    none = {"op": "gt", "column": "x", "value": 100}

    def agg(label, expression, keys, scan_rows=None):
        request = {"expression": expression}
        if scan_rows:
            request["scan_rows"] = scan_rows
        return (label, "evaluate_expression", request, columns, rows, "jsonl", keys)
    _cases(ctx, [
        agg("count", {"aggregate": "count"}, _aggregate("count", 4, 4, 4)),
        agg("count of a column", {"aggregate": "count", "column": "x"}, _aggregate("count", 4, 4, 4, "x")),
        agg("sum", {"aggregate": "sum", "column": "x"}, _aggregate("sum", 12, 4, 4, "x")),
        agg("avg", {"aggregate": "avg", "column": "x"}, _aggregate("avg", 4.0, 4, 4, "x")),
        agg("min", {"aggregate": "min", "column": "x"}, _aggregate("min", 3, 4, 4, "x")),
        agg("max of strings", {"aggregate": "max", "column": "y"}, _aggregate("max", "r", 4, 4, "y")),
        agg("sum of nulls", {"aggregate": "sum", "column": "z"}, _aggregate("sum", None, 4, 4, "z")),
        agg("sum of nothing", {"aggregate": "sum", "column": "x", "where": none}, _aggregate("sum", None, 0, 4, "x")),
        agg("count of nothing", {"aggregate": "count", "where": none}, _aggregate("count", 0, 0, 4)),
        agg("sum over scan_rows 2", {"aggregate": "sum", "column": "x"}, _aggregate("sum", 7, 2, 2, "x"), 2),
        agg("sum of strings", {"aggregate": "sum", "column": "y"}, ("failed", "PROBE_AGGREGATE_NOT_NUMERIC")),
        ("max of mixed cells", "evaluate_expression", {"expression": {"aggregate": "max", "column": "v"}}, ["v"],
         [[1], ["a"]], "jsonl", _aggregate("max", None, 2, 2, "v")),
        ("avg of fractions", "evaluate_expression", {"expression": {"aggregate": "avg", "column": "v"}}, ["v"],
         [["1.5"], ["2"]], "csv", _aggregate("avg", 1.75, 2, 2, "v")),
        ("sum past 2^53", "evaluate_expression", {"expression": {"aggregate": "sum", "column": "v"}}, ["v"],
         [[9007199254740991], [1]], "jsonl", _aggregate("sum", 9007199254740992.0, 2, 2, "v")),
        ("an infinite sum", "evaluate_expression", {"expression": {"aggregate": "sum", "column": "v"}}, ["v"],
         [["1.7e308"], ["1.7e308"]], "csv", ("failed", "PROBE_FAILED")),
    ])


# ---------------------------------------------------------------- SESSION-WORK-7

def _example(name):
    with open(os.path.join(EXAMPLES, name + ".json"), encoding="utf-8") as handle:
        return json.load(handle)


# The content the contract's examples describe (their content_sha256 and content_bytes): the
# normalized content of a three-row CSV.
EXAMPLE_CONTENT = _content(["city", "population", "note"], [["Oslo", "709037", ""], ["Bergen", "291940", "port"],
                                                            ["Trondheim", "212660", ""]])


@check("work.exact-output", clauses=["SESSION-WORK-7"], level="MUST",
       title="the reference child's exact bytes for the contract's examples, its failure lines, and no oversized "
             "result",
       fakes="the contract's probe-input examples (and the same input asked as each other kind) over the content "
             "they describe; inputs refused with a column unknown and a string average; a profile whose result "
             "would exceed 65536 bytes",
       expected="stdout byte for byte the canonical form of the matching probe-result examples; stderr the "
                "canonical probe-failure examples; PROBE_FAILED for the oversized result")
def _(ctx):
    sample, count = _example("probe-input-sample-rows"), _example("probe-input-evaluate-normalized")
    ctx.expect(sample["content_sha256"] == hashlib.sha256(EXAMPLE_CONTENT).hexdigest(),
               expected="the examples' content", actual="another content", diagnosis="a harness fixture drifted")

    def asked(kind, request):
        return dict(sample, probe_kind=kind, request=dict(request, source_id=sample["source_id"]))
    avg = {"scan_rows": 10000, "expression": {"aggregate": "avg", "column": "population", "where": {
        "op": "gt", "column": "population", "value": 250000}}}
    nothing = {"scan_rows": 10000, "expression": {"aggregate": "sum", "column": "population", "where": {
        "op": "eq", "column": "city", "value": "Stavanger"}}}
    cases = [("sample_rows example", sample, "probe-result-sample-rows-window"),
             ("count example", count, "probe-result-evaluate-count"),
             ("source_inspect", asked("source_inspect", {"scan_rows": 10000}), "probe-result-source-inspect"),
             ("profile_columns", asked("profile_columns", {"scan_rows": 10000}), "probe-result-profile-columns"),
             ("avg with a fraction", asked("evaluate_expression", avg), "probe-result-evaluate-avg-fraction"),
             ("sum of nothing", asked("evaluate_expression", nothing), "probe-result-evaluate-sum-of-nothing-null")]
    for (label, _header_, result), run in zip(cases, _runs(ctx, [(h, EXAMPLE_CONTENT) for _l, h, _r in cases])):
        _judge(ctx, label, run, canonical(_example(result)))
    unknown = asked("sample_rows", {"offset": 0, "limit": 20, "columns": ["country"]})
    not_numeric = asked("evaluate_expression", {"scan_rows": 10000, "expression": {"aggregate": "avg",
                                                                                   "column": "city"}})
    for label, header, failure in (("column unknown", unknown, "probe-failure-column-unknown"),
                                   ("not numeric", not_numeric, "probe-failure-not-numeric")):
        run = _run(ctx, header, EXAMPLE_CONTENT)
        _judge(ctx, label, run, ("failed", _example(failure)["code"]))
        ctx.expect(run.stderr == canonical(_example(failure)) + b"\n", expected="%s: the example's line" % label,
                   actual="%r" % run.stderr[:200], diagnosis="the failure line is the example, canonical")
    names = ["n%02d" % i + "c" * 1000 for i in range(64)]
    rows = [["%02d" % i + "a" * 300 for i in range(64)], ["%02d" % i + "b" * 300 for i in range(64)]]
    _cases(ctx, [("a result over 65536 bytes", "profile_columns", {}, names, rows, "jsonl", ("failed", "PROBE_FAILED"))])
