"""make bench-scan: the quick run works, and how its figures and budgets are made.

The quick run (`python3 -m conformance.bench scan --quick`, a few assignments,
bundles of a few MiB, one stop trial per phase) is judged on its structure
only: every table and its column headings, a row per program in each, every
stop phase, the Markdown summary, the JSON document's keys, no credential
anywhere, no scratch left behind. Its comparison node is a stub that exits at
once, so the run also shows that a failing comparison node is reported "n/a"
and the bench goes on. Numbers belong to the bench itself, never to a test:
how a budget is judged from numbers is tested here with made-up figures, so
NOT MET is exercised without a slow node. The planted bundle is judged by the
plane's own reader (SCAN-BUNDLE-1..4).
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
from conformance.bench import scan as bench
from conformance.planes.scan.bundles import read_bundle
from conformance.timeouts import SHORT_TIMEOUT_S

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The quick run takes about 40 s on 2 cores with a stub comparison node; this only bounds a hung run.
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
        cls.scratch = tempfile.mkdtemp(prefix="test-bench-scan-")
        cls.json_path = os.path.join(cls.scratch, "bench.json")
        cls.stub = os.path.join(cls.scratch, "failing_worker.py")
        with open(cls.stub, "w", encoding="utf-8") as handle:
            handle.write(FAILING_STUB)
        cls.tmpdir = os.path.join(cls.scratch, "tmp")
        os.mkdir(cls.tmpdir)
        env = dict(os.environ, TMPDIR=cls.tmpdir)
        proc = subprocess.run([sys.executable, "-m", "conformance.bench", "scan", "--quick", "--assignments", "3",
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
        wanted = [" ".join(bench.HEADERS[name]) for name in ("throughput", "idle", "rss", "restart", "stop")]
        self.assertEqual(header_rows(self.out), wanted + [" ".join(core.BUDGET_HEADERS)])
        self.assertRegex(self.out, r"(?m)^bench: finished in \d+ s$")

    def test_the_node_is_measured_and_the_stub_is_not(self):
        for title in (bench.TITLE_IDLE, bench.TITLE_RESTART):
            rows = table_rows(self.out, title)
            node = [r for r in rows if r.startswith("scan_worker ")]
            stub = [r for r in rows if r.startswith("failing_worker ")]
            self.assertEqual(len(node), 1, title)
            self.assertNotIn("n/a", node[0], title)
            self.assertEqual(len(stub), 1, title)
            self.assertIn("n/a", stub[0], title)
        for title, per_program in ((bench.TITLE_THROUGHPUT, len(bench.SLOT_COUNTS)),
                                   (bench.TITLE_RSS, len(bench.QUICK_RSS_SIZES))):
            rows = table_rows(self.out, title)
            self.assertEqual(len(rows), 2 * per_program, title)
            self.assertTrue(rows[0].startswith("scan_worker "), title)
            self.assertTrue(all("n/a" not in r for r in rows[:per_program]), title)
            self.assertTrue(rows[per_program].startswith("failing_worker "), title)
            self.assertTrue(all("n/a" in r for r in rows[per_program:]), title)
        self.assertRegex("\n".join(table_rows(self.out, bench.TITLE_RSS)), r"spread \d+\.\d MiB")

    def test_every_stop_phase_for_both_programs(self):
        rows = table_rows(self.out, bench.TITLE_STOP)
        for phase in bench.PHASES:
            for name in ("scan_worker", "failing_worker"):
                self.assertEqual(len([r for r in rows if re.match(r"^%s +%s " % (re.escape(phase), name), r)]), 1,
                                 (phase, name))

    def test_the_markdown_summary(self):
        lines = self.out.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith(bench.TITLE_MARKDOWN))
        self.assertEqual(lines[start + 1], "| figure | budget | scan_worker | failing_worker |")
        rows = [line for line in lines[start + 3:] if line.startswith("|")]
        self.assertEqual(len(rows), len(bench.SLOT_COUNTS) + 1 + len(bench.QUICK_RSS_SIZES) + 1 + len(bench.PHASES))
        for row in rows:
            self.assertEqual(row.count("|"), 5, row)

    def test_writes_the_json_document(self):
        doc = self.doc
        self.assertIsNotNone(doc, "no --json file written")
        for key in ("schema", "node", "vs", "names", "options", "machine", "wall_s", "figures", "budgets", "runs",
                    "stop_trials"):
            self.assertIn(key, doc)
        self.assertEqual(doc["schema"], bench.Bench.SCHEMA)
        self.assertEqual(sorted(doc["figures"]), sorted(bench.FIGURES + ("stop",)))
        node, vs = doc["names"]["node"], doc["names"]["vs"]
        for slots in bench.SLOT_COUNTS:
            self.assertIsNotNone(doc["figures"]["throughput"][node][str(slots)]["per_s"])
            self.assertIn("error", doc["figures"]["throughput"][vs][str(slots)])
        self.assertIsNotNone(doc["figures"]["idle"][node]["share"])
        self.assertIsNotNone(doc["figures"]["rss"][node]["spread_bytes"])
        self.assertIsNotNone(doc["figures"]["restart"][node]["median_s"])
        self.assertIn("error", doc["figures"]["idle"][vs])
        self.assertEqual(sorted(doc["figures"]["stop"]), sorted(bench.PHASES))
        for trial in doc["stop_trials"]:
            self.assertTrue(trial["verdict"])
        self.assertEqual(len(doc["budgets"]), 9)
        for row in doc["budgets"]:
            self.assertIsNone(row["met"], "a quick run judges no budget: %s" % row["figure"])

    def test_no_credential_anywhere(self):
        with open(self.json_path, encoding="utf-8") as handle:
            raw = handle.read()
        for where, text in (("stdout", self.out), ("stderr", self.err), ("--json", raw)):
            self.assertNotIn("Bearer", text, where)
            self.assertNotIn("X-Amz-", text, where)
            self.assertNotIn("Signature=", text, where)

    def test_leaves_no_scratch(self):
        self.assertEqual(os.listdir(self.tmpdir), [])


def _summary(median, maximum, exited=5, trials=5):
    return {"median_s": median, "max_s": maximum, "exited": exited, "trials": trials}


def _figures(idle=None, beyond=None, spread=None, drain=None, sigint=None, second=None, tp1=None, tp4=None,
             restart=None):
    """Figures with these numbers for the program "node" (None: not measured); stops are _summary()s;
    tp1, tp4: assignments per second with 1 and 4 slots; restart: the restart's median in seconds."""
    rss = {}
    if beyond is not None or spread is not None:
        rss = {"largest": {"size": core.GiB, "beyond_idle_bytes": beyond}, "spread_bytes": spread,
               "points": [{"size": 64 * core.MiB}, {"size": core.GiB}]}
    stop = {}
    for phase, summary in zip(bench.PHASES, (drain, sigint, second)):
        stop[phase] = {"node": summary or {"trials": 0}}
    throughput = dict((slots, {"per_s": per_s}) for slots, per_s in ((1, tp1), (4, tp4)) if per_s is not None)
    return {"idle": {"node": {} if idle is None else {"share": idle}}, "rss": {"node": rss}, "stop": stop,
            "throughput": {"node": throughput},
            "restart": {"node": {} if restart is None else {"median_s": restart}, "naive": {"median_s": 0.045}}}


class Budgets(unittest.TestCase):
    """The budget table, judged from made-up figures."""

    ALL_MET = dict(idle=0.002, beyond=3 * core.MiB, spread=512 * 1024, drain=_summary(0.06, 0.09),
                   sigint=_summary(0.03, 0.05), second=_summary(0.05, 0.08), tp1=5.0, tp4=16.5, restart=0.085)

    def test_all_met(self):
        rows = bench.budget_rows(_figures(**self.ALL_MET), "node", vs="naive")
        self.assertEqual([met for _f, _b, _g, met in rows], [True] * 9)
        self.assertEqual(rows[0][1:3], ("<= 0.25 % of one core", "0.20 %"))
        self.assertEqual(rows[1][0], "peak RSS uploading 1 GiB, beyond the idle worker")
        self.assertEqual(rows[1][1:3], ("<= 32 MiB", "+3.0 MiB"))
        self.assertEqual(rows[2][0], "peak RSS spread, 64 MiB vs 1 GiB")
        self.assertEqual(rows[2][2], "0.5 MiB")
        self.assertEqual(rows[3][2], "max 90 ms")
        self.assertEqual(rows[4][2], "max 80 ms")
        self.assertEqual(rows[5][2], "30 ms; 50 ms")
        self.assertEqual(rows[6], ("throughput, tiny assignments, 1 slot", ">= 5 per s", "5.00 per s", True))
        self.assertEqual(rows[7][:3], ("throughput, tiny assignments, 4 slots", ">= 15 per s", "16.50 per s"))
        self.assertEqual(rows[8], ("restart after SIGKILL, exec -> first request, median, beyond naive's",
                                   "<= +40 ms", "+40 ms (85 ms; 45 ms)", True))

    def test_each_missed(self):
        misses = [dict(idle=0.0026), dict(beyond=32 * core.MiB + 1), dict(spread=4 * core.MiB + 1),
                  dict(drain=_summary(0.06, 1.01)), dict(sigint=_summary(0.03, 3.2)),
                  dict(second=_summary(0.101, 0.2)), dict(tp1=4.99), dict(tp4=14.9), dict(restart=0.0851)]
        for change in misses:
            rows = bench.budget_rows(_figures(**dict(self.ALL_MET, **change)), "node", vs="naive")
            self.assertEqual([met for _f, _b, _g, met in rows].count(False), 1, change)

    def test_a_killed_trial_is_not_met(self):
        rows = bench.budget_rows(_figures(**dict(self.ALL_MET, drain=_summary(0.06, 0.09, exited=4))), "node")
        self.assertEqual(rows[3][2:], ("max 90 ms; 1 of 5 trials killed", False))

    def test_unmeasured_is_not_judged(self):
        rows = bench.budget_rows(_figures(), "node")
        self.assertEqual([(got, met) for _f, _b, got, met in rows], [("n/a", None)] * 9)

    def test_quick_judges_nothing(self):
        rows = bench.budget_rows(_figures(**self.ALL_MET), "node", quick=True)
        self.assertEqual([met for _f, _b, _g, met in rows], [None] * 9)
        self.assertTrue(all(figure.endswith("(--quick)") for figure, _b, _g, _m in rows))


class Pieces(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix="test-bench-scan-")

    def tearDown(self):
        shutil.rmtree(self.scratch, ignore_errors=True)

    def test_the_planted_bundle_is_valid_and_its_meta_matches(self):
        target = {"name": "notes.txt", "size": 48, "sha256": "a" * 64}
        expect = {"reservation_id": 7, "bundle_id": "b" * 32, "scan_event_id": "c" * 32,
                  "execution_snapshot_sha256": "d" * 64, "targets": [target],
                  "declared_bundle_bytes": 3 * core.MiB}
        path = os.path.join(self.scratch, "bundle.jsonl")
        meta = bench.write_bundle(path, expect, 2 * core.MiB, slot_id=0)
        report = read_bundle(path, dict(expect, slot_id=0))
        self.assertEqual(report.problems, [])
        self.assertEqual(meta, {"bytes": report.size, "canonical_scan_event_hash": report.events_sha256,
                                "payload_sha256": report.sha256})
        self.assertLessEqual(2 * core.MiB - bench.EVENT_LINE_BYTES, meta["bytes"])
        self.assertLessEqual(meta["bytes"], 2 * core.MiB)
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)

    def test_a_tiny_bundle_is_header_target_done_trailer(self):
        expect = {"reservation_id": 1, "bundle_id": "b" * 32, "scan_event_id": "c" * 32,
                  "execution_snapshot_sha256": "d" * 64, "targets": [{"name": "t", "size": 1, "sha256": "e" * 64}]}
        path = os.path.join(self.scratch, "tiny.jsonl")
        bench.write_bundle(path, expect, 10)
        report = read_bundle(path, expect)
        self.assertEqual((report.problems, report.event_count), ([], 1))

    def test_rss_figure(self):
        raw = [{"size": 64 * core.MiB, "bundle_bytes": 64 * core.MiB, "maxrss_bytes": 40 * core.MiB,
                "upload_s": 0.5},
               {"size": core.GiB, "bundle_bytes": core.GiB, "maxrss_bytes": 41 * core.MiB, "upload_s": 8.0}]
        figure = bench.rss_figure(raw, {"idle_maxrss_bytes": 35 * core.MiB})
        self.assertEqual(figure["spread_bytes"], core.MiB)
        self.assertEqual(figure["largest"]["beyond_idle_bytes"], 6 * core.MiB)
        self.assertEqual(figure["points"][1]["mib_per_s"], 128.0)
        self.assertIn("error", bench.rss_figure(raw[:1] + [{"size": core.GiB, "error": "exited"}], None))
        self.assertIn("error", bench.rss_figure(None, None))

    def test_restart_figure(self):
        raw = {"restarts": [{"latency_s": 0.2, "verb": "status", "method": "GET"},
                            {"latency_s": 0.1, "verb": "status", "method": "GET"},
                            {"latency_s": 0.4, "verb": "progress", "method": "POST"}]}
        figure = bench.restart_figure(raw)
        self.assertEqual((figure["median_s"], figure["min_s"], figure["max_s"]), (0.2, 0.1, 0.4))
        self.assertEqual(figure["first_requests"], ["GET status", "POST progress"])
        self.assertIn("error", bench.restart_figure({"restarts": [], "error": "no request"}))

    def test_comparison_node(self):
        self.assertEqual(bench.find_vs(""), (None, "none asked for"))
        program, note = bench.find_vs(os.path.join("examples", "no_such_worker.py"))
        self.assertIsNone(program)
        self.assertIn("absent", note)
        program, note = bench.find_vs(os.path.join("nodes", "scan_worker.py"))
        self.assertEqual((program.name, note), ("scan_worker", None))

    def test_bad_usage_exits_2(self):
        for argv in (["--assignments", "0"], ["--trials", "0"], ["--nope"]):
            with contextlib.redirect_stderr(io.StringIO()):
                try:
                    status = core.dispatch(["scan"] + argv)
                except SystemExit as exc:
                    status = exc.code
            self.assertEqual(status, 2, argv)

    def test_dispatch_finds_the_bench(self):
        self.assertIn("scan", core.contracts())
        self.assertIs(core.bench_class("scan"), bench.Bench)


class MakeTarget(unittest.TestCase):
    def test_make_bench_scan_runs_the_bench(self):
        with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as handle:
            text = handle.read()
        match = re.search(r"^bench-scan:.*\n((?:\t.*\n)+)", text, re.M)
        self.assertIsNotNone(match, "the Makefile has no bench-scan target")
        self.assertIn("-m conformance.bench scan", match.group(1))

    def test_help_works(self):
        proc = subprocess.run([sys.executable, "-m", "conformance.bench", "scan", "--help"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=SHORT_TIMEOUT_S)
        self.assertEqual(proc.returncode, 0)
        self.assertIn(b"--vs PATH", proc.stdout)


if __name__ == "__main__":
    unittest.main()
