"""make bench-session: the quick run works, and how its figures and budgets are made.

The quick run (`python3 -m conformance.bench session --quick`, three latency
probes, one stop trial per phase) is judged on its structure only: every
table and its column headings, a row per program in each, every stop phase,
the JSON document's keys, no credential anywhere, no scratch left behind. Its
comparison node is a stub that exits at once, so the run also shows that a
failing comparison node is reported "n/a" and the bench goes on. Numbers
belong to the bench itself, never to a test: how a budget is judged from
numbers is tested here with made-up figures, so NOT MET is exercised without
a slow node.
"""

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from conformance.bench import core
from conformance.bench import session as bench
from conformance.timeouts import SHORT_TIMEOUT_S

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The quick run takes about 20 s on 2 cores with a stub comparison node; this only bounds a hung run.
QUICK_RUN_TIMEOUT_S = 300
FAILING_STUB = "import sys\nsys.exit(3)\n"


def _normalise(line):
    return " ".join(line.split())


def header_rows(text):
    """The column-heading row of every table: the line above each '----  ---' rule."""
    lines = text.splitlines()
    return [_normalise(lines[i - 1]) for i, line in enumerate(lines) if i and re.match(r"^-+(  -+)+$", line)]


def table_rows(text, title):
    """The rows of the table under the line starting with title."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rows = []
    for line in lines[start + 3:]:
        if not line.strip():
            break
        rows.append(line)
    return rows


@unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves the bench run to make test")
class QuickRun(unittest.TestCase):
    """One quick bench run against the reference node and a failing stub, shared by the tests below."""

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp(prefix="test-bench-session-")
        cls.json_path = os.path.join(cls.scratch, "bench.json")
        cls.stub = os.path.join(cls.scratch, "failing_worker.py")
        with open(cls.stub, "w", encoding="utf-8") as handle:
            handle.write(FAILING_STUB)
        cls.tmpdir = os.path.join(cls.scratch, "tmp")
        os.mkdir(cls.tmpdir)
        env = dict(os.environ, TMPDIR=cls.tmpdir)
        proc = subprocess.run([sys.executable, "-m", "conformance.bench", "session", "--quick", "--probes", "3",
                               "--vs", cls.stub, "--json", cls.json_path], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=QUICK_RUN_TIMEOUT_S)
        cls.status = proc.returncode
        cls.out = proc.stdout.decode("utf-8", "replace")
        cls.err = proc.stderr.decode("utf-8", "replace")
        cls.doc = None
        if os.path.exists(cls.json_path):
            with open(cls.json_path, encoding="utf-8") as handle:
                cls.doc = json.load(handle)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.scratch, ignore_errors=True)

    def test_exits_0(self):
        self.assertEqual(self.status, 0, self.err[-2000:])

    def test_prints_every_table(self):
        for title in bench.TABLE_TITLES:
            self.assertIn(title, self.out)
        wanted = [" ".join(bench.HEADERS[name]) for name in ("latency", "idle", "rss", "heartbeat", "stop")]
        self.assertEqual(header_rows(self.out), wanted + [" ".join(core.BUDGET_HEADERS)])
        self.assertRegex(self.out, r"(?m)^bench: finished in \d+ s$")

    def test_the_node_is_measured_and_the_stub_is_not(self):
        for title in (bench.TITLE_LATENCY, bench.TITLE_IDLE, bench.TITLE_HEARTBEAT):
            rows = table_rows(self.out, title)
            node = [r for r in rows if r.startswith("session_worker ")]
            stub = [r for r in rows if r.startswith("failing_worker ")]
            self.assertEqual(len(node), 1, title)
            self.assertNotIn("n/a", node[0], title)
            self.assertEqual(len(stub), 1, title)
            self.assertIn("n/a", stub[0], title)
        memory = table_rows(self.out, bench.TITLE_RSS)
        self.assertEqual(len([r for r in memory if r.startswith("session_worker ")]), 1)
        self.assertRegex("\n".join(memory), r"growth: peak [-+]\d+\.\d\d MiB")

    def test_every_stop_phase_for_both_programs(self):
        rows = table_rows(self.out, bench.TITLE_STOP)
        for phase in bench.PHASES:
            for name in ("session_worker", "failing_worker"):
                self.assertEqual(len([r for r in rows if re.match(r"^%s +%s " % (re.escape(phase), name), r)]), 1,
                                 (phase, name))

    def test_writes_the_json_document(self):
        doc = self.doc
        self.assertIsNotNone(doc, "no --json file written")
        for key in ("schema", "node", "vs", "names", "options", "machine", "wall_s", "figures", "budgets", "runs",
                    "stop_trials"):
            self.assertIn(key, doc)
        self.assertEqual(doc["schema"], bench.Bench.SCHEMA)
        self.assertEqual(sorted(doc["figures"]), sorted(bench.FIGURES + ("stop",)))
        node = doc["names"]["node"]
        self.assertIsNotNone(doc["figures"]["latency"][node]["median_s"])
        self.assertIsNotNone(doc["figures"]["idle"][node]["share"])
        self.assertIsNotNone(doc["figures"]["rss"][node]["peak_growth_bytes"])
        self.assertIsNotNone(doc["figures"]["heartbeat"][node]["max_deviation_s"])
        self.assertIn("error", doc["figures"]["latency"][doc["names"]["vs"]])
        self.assertEqual(sorted(doc["figures"]["stop"]), sorted(bench.PHASES))
        for trial in doc["stop_trials"]:
            self.assertTrue(trial["verdict"])
        self.assertEqual(len(doc["budgets"]), 8)
        for row in doc["budgets"]:
            self.assertIsNone(row["met"], "a quick run judges no budget: %s" % row["figure"])

    def test_no_credential_anywhere(self):
        with open(self.json_path, encoding="utf-8") as handle:
            raw = handle.read()
        for where, text in (("stdout", self.out), ("stderr", self.err), ("--json", raw)):
            self.assertNotIn("CANARY", text, where)
            self.assertNotIn("mr_cap_", text, where)
            self.assertNotIn("X-Goog-", text, where)

    def test_leaves_no_scratch(self):
        self.assertEqual(os.listdir(self.tmpdir), [])


def _figures(latency=None, idle=None, growth=None, deviation=None, stop=None, held=None, first=None):
    """Figures with these numbers for the program "node" (None: not measured)."""
    stop = stop or {}
    phases = {}
    for phase in bench.PHASES:
        median = held if phase == "report held" else stop.get(phase)
        phases[phase] = {"node": {"median_s": median}}
    latency_figure = {} if latency is None else {"median_s": latency[0], "p99_s": latency[1], "ok": 100}
    if first is not None:
        latency_figure["first_s"] = first
    return {"latency": {"node": latency_figure},
            "idle": {"node": {} if idle is None else {"share": idle}},
            "rss": {"node": {} if growth is None else {"peak_growth_bytes": growth, "span": "100 -> 1000"}},
            "heartbeat": {"node": {} if deviation is None else {"max_deviation_s": deviation, "interval_s": 1.0}},
            "stop": phases}


class Budgets(unittest.TestCase):
    """The budget table, judged from made-up figures."""

    ALL_MET = dict(latency=(0.020, 0.090), idle=0.002, growth=300 * 1024, deviation=0.05,
                   stop={"idle": 0.04, "acquisition wait": 0.05, "probe child": 0.06}, held=0.03, first=0.08)

    def test_all_met(self):
        rows = bench.budget_rows(_figures(**self.ALL_MET), "node")
        self.assertEqual([met for _f, _b, _g, met in rows], [True] * 8)
        self.assertEqual(rows[0][1:3], ("<= 25 ms", "20 ms (100 probes)"))
        self.assertEqual(rows[2][2], "0.20 %")
        self.assertEqual(rows[3][0], "peak RSS growth, probe 100 -> 1000")
        self.assertEqual(rows[3][2], "+0.29 MiB")
        self.assertEqual(rows[4][1], "<= 0.40 s (interval 1 s)")
        self.assertEqual(rows[5][2], "worst 60 ms (probe child)")
        self.assertEqual(rows[7][:3], ("first probe of a 1 MiB source", "<= 100 ms", "80 ms"))

    def test_each_missed(self):
        misses = [dict(latency=(0.026, 0.090)), dict(latency=(0.020, 0.151)), dict(idle=0.0026),
                  dict(growth=2 * core.MiB + 1), dict(deviation=0.41),
                  dict(stop={"idle": 0.04, "acquisition wait": 0.101, "probe child": 0.06}), dict(held=0.2),
                  dict(first=0.101)]
        for index, change in enumerate(misses):
            figures = dict(self.ALL_MET, **change)
            rows = bench.budget_rows(_figures(**figures), "node")
            verdicts = [met for _f, _b, _g, met in rows]
            if index == 0:  # the median's change leaves the p99 met
                self.assertEqual(verdicts[:2], [False, True])
            else:
                self.assertEqual(verdicts.count(False), 1, change)

    def test_unmeasured_is_not_judged(self):
        rows = bench.budget_rows(_figures(), "node")
        self.assertEqual([(got, met) for _f, _b, got, met in rows], [("n/a", None)] * 8)

    def test_a_phase_without_an_exit_is_not_met(self):
        figures = dict(self.ALL_MET, stop={"idle": 0.04, "acquisition wait": None, "probe child": 0.06})
        row = bench.budget_rows(_figures(**figures), "node")[5]
        self.assertEqual(row[2:], ("worst 60 ms (probe child); no exit in acquisition wait", False))

    def test_quick_judges_nothing(self):
        rows = bench.budget_rows(_figures(**self.ALL_MET), "node", quick=True)
        self.assertEqual([met for _f, _b, _g, met in rows], [None] * 8)
        self.assertTrue(all(figure.endswith("(--quick)") for figure, _b, _g, _m in rows))


class Pieces(unittest.TestCase):
    def test_percentile_is_nearest_rank(self):
        values = [float(i) for i in range(1, 101)]
        self.assertEqual(bench.percentile(values, 0.99), 99.0)
        self.assertEqual(bench.percentile(values, 0.5), 50.0)
        self.assertEqual(bench.percentile([7.0], 0.99), 7.0)
        self.assertIsNone(bench.percentile([], 0.99))

    def test_heartbeat_gaps_around_a_probe(self):
        beats = [0.0, 1.0, 2.0, 3.1, 4.0, 5.0, 6.0]
        gaps, opened = bench.heartbeat_gaps(beats, 2.5, 4.5)
        self.assertEqual((gaps, opened), ([1.1, 0.9, 1.0], False))
        self.assertAlmostEqual(bench.max_deviation(gaps, 1.0), 0.1)

    def test_a_node_that_stops_beating_leaves_an_open_gap(self):
        self.assertEqual(bench.heartbeat_gaps([0.0, 1.0], 1.5, 4.0), ([3.0], True))
        self.assertEqual(bench.heartbeat_gaps([5.0], 1.0, 3.0), ([4.0], False))
        self.assertEqual(bench.heartbeat_gaps([], 1.0, 3.0), ([2.0], True))
        self.assertIsNone(bench.max_deviation([], 1.0))

    def test_latency_figure(self):
        raw = {"content_bytes": 1 << 20, "probes": [
            {"latency_s": 0.02, "outcome": "succeeded", "failure_code": None},
            {"latency_s": 0.04, "outcome": "succeeded", "failure_code": None},
            {"latency_s": 0.01, "outcome": "failed", "failure_code": "PROBE_FAILED"}]}
        figure = bench.latency_figure(raw)
        self.assertEqual((figure["ok"], figure["asked"], figure["median_s"], figure["p99_s"]), (2, 3, 0.03, 0.04))
        self.assertEqual(figure["first_s"], 0.02)  # the first probe of the source, apart
        raw["probes"][0]["outcome"] = "failed"
        self.assertIsNone(bench.latency_figure(raw)["first_s"])
        self.assertEqual(figure["failures"], ["PROBE_FAILED"])
        self.assertIn("error", bench.latency_figure({"error": "exited", "probes": []}))
        self.assertIn("error", bench.latency_figure(None))

    def test_rss_figure(self):
        raw = {"checkpoints": [{"probes": 100, "peak_bytes": 100 * core.MiB, "rss_bytes": 90 * core.MiB,
                                "processes": 4, "elapsed_s": 20.0},
                               {"probes": 1000, "peak_bytes": 101 * core.MiB, "rss_bytes": 89 * core.MiB,
                                "processes": 4, "elapsed_s": 200.0}], "succeeded": 1000}
        figure = bench.rss_figure(raw)
        self.assertEqual((figure["peak_growth_bytes"], figure["rss_growth_bytes"]), (core.MiB, -core.MiB))
        self.assertEqual((figure["span"], figure["probes_per_s"]), ("100 -> 1000", 5.0))

    def test_the_latency_source_is_1_mib(self):
        columns, rows = bench.latency_rows()
        from conformance.planes.session.sources import rows_content
        size = len(rows_content(columns, rows))
        self.assertGreaterEqual(size, core.MiB)
        self.assertLess(size, core.MiB + 1024)

    def test_the_busy_expression_is_within_the_grammar(self):
        expression = bench.busy_expression()
        count = [0]

        def walk(predicate, depth):
            count[0] += 1
            self.assertLessEqual(depth, 8)
            for arg in predicate.get("args", []):
                self.assertLessEqual(len(predicate["args"]), 16)
                walk(arg, depth + 1)
        walk(expression["where"], 1)
        self.assertLessEqual(count[0], 64)

    def test_proc_readers_see_this_process(self):
        peak, resident, count = bench.tree_memory(os.getpid())
        self.assertGreater(peak, 0)
        self.assertGreaterEqual(peak, resident)
        self.assertGreaterEqual(count, 1)
        self.assertIn(os.getpid(), bench.tree(os.getpid()))

    def test_comparison_node(self):
        self.assertEqual(bench.find_vs(""), (None, "none asked for"))
        program, note = bench.find_vs(os.path.join("examples", "no_such_worker.py"))
        self.assertIsNone(program)
        self.assertIn("absent", note)
        program, note = bench.find_vs(os.path.join("nodes", "session_worker.py"))
        self.assertEqual((program.name, note), ("session_worker", None))

    def test_bad_usage_exits_2(self):
        for argv in (["--probes", "0"], ["--trials", "0"], ["--nope"]):
            with contextlib.redirect_stderr(io.StringIO()):
                try:
                    status = core.dispatch(["session"] + argv)
                except SystemExit as exc:
                    status = exc.code
            self.assertEqual(status, 2, argv)

    def test_dispatch_finds_the_bench(self):
        self.assertIn("session", core.contracts())
        self.assertIs(core.bench_class("session"), bench.Bench)


class MakeTarget(unittest.TestCase):
    def test_make_bench_session_runs_the_bench(self):
        with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as handle:
            text = handle.read()
        match = re.search(r"^bench-session:.*\n((?:\t.*\n)+)", text, re.M)
        self.assertIsNotNone(match, "the Makefile has no bench-session target")
        self.assertIn("-m conformance.bench session", match.group(1))

    def test_help_works(self):
        proc = subprocess.run([sys.executable, "-m", "conformance.bench", "session", "--help"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=SHORT_TIMEOUT_S)
        self.assertEqual(proc.returncode, 0)
        self.assertIn(b"--vs PATH", proc.stdout)


if __name__ == "__main__":
    unittest.main()
