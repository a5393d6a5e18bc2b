"""make bench: the quick run works, and conformance/bench/README.md stays true to it.

The quick run (`python3 -m conformance.bench --quick`, well under 60 s) is
judged on its structure only: every table and its column headings, every
stop phase, the JSON document's keys, no credential anywhere, no scratch
left behind. Performance numbers belong to the bench itself, never to a test.
How a budget is judged from numbers is tested here with made-up medians
(CpuBudgets), so a NOT MET verdict is exercised without a slow node.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from conformance.bench import core
from conformance.bench import step as bench
from conformance.timeouts import SHORT_TIMEOUT_S

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The quick run takes about 25 s on 2 cores; this only bounds a hung run.
QUICK_RUN_TIMEOUT_S = 240


def _normalise(line):
    return " ".join(line.split())


def header_rows(text):
    """The column-heading row of every table: the line above each '----  ---' rule."""
    lines = text.splitlines()
    return [_normalise(lines[i - 1]) for i, line in enumerate(lines)
            if i and re.match(r"^-+(  -+)+$", line)]


def readme_performance():
    """The step section of conformance/bench/README.md, where the bench's figures are pasted."""
    with open(os.path.join(ROOT, "conformance", "bench", "README.md"), encoding="utf-8") as handle:
        text = handle.read()
    match = re.search(r"^## The step node\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    return match.group(1) if match else None


@unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves the bench run to make test")
class QuickRun(unittest.TestCase):
    """One quick bench run, shared by the tests below."""

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp(prefix="test-bench-")
        cls.json_path = os.path.join(cls.scratch, "bench.json")
        cls.tmpdir = os.path.join(cls.scratch, "tmp")
        os.mkdir(cls.tmpdir)
        env = dict(os.environ, TMPDIR=cls.tmpdir)
        proc = subprocess.run([sys.executable, "-m", "conformance.bench", "--quick", "--json", cls.json_path],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=QUICK_RUN_TIMEOUT_S)
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
        self.assertEqual(header_rows(self.out), [" ".join(h) for h in bench.expected_headers("hello_node",
                                                                                              "naive_step_node")])
        for phase in bench.PHASES:
            self.assertEqual(len(re.findall(r"^%s  +(hello_node|naive_step_node) " % re.escape(phase), self.out,
                                            re.M)), 2, phase)
        self.assertRegex(self.out, r"(?m)^bench: finished in \d+ s$")

    def test_writes_the_json_document(self):
        doc = self.doc
        self.assertIsNotNone(doc, "no --json file written")
        for key in ("schema", "node", "vs", "names", "options", "machine", "wall_s", "figures", "budgets", "runs",
                    "stop_trials"):
            self.assertIn(key, doc)
        figures = doc["figures"]
        self.assertEqual(sorted(figures), ["cgroup", "copies", "marginal", "stop", "tls"])
        for size in ("16 MiB", "64 MiB"):
            per = figures["copies"][size]
            for name in ("hello_node", "naive_step_node", "floor", "store alone", "sha256 alone"):
                self.assertIn("cpu_s_per_gib", per[name])
            for key in ("cpu_node_over_vs", "cpu_node_over_floor", "cpu_node_over_sha256"):
                self.assertIn(key, per["ratios"])
        self.assertEqual(sorted(figures["stop"]), sorted(bench.PHASES))
        for phase in bench.PHASES:
            for name in ("hello_node", "naive_step_node"):
                for key in ("median_s", "p95_s", "max_s", "receipts", "trials", "verdicts"):
                    self.assertIn(key, figures["stop"][phase][name])
        self.assertTrue(doc["runs"])
        for run in doc["runs"]:
            self.assertIn("cpu_s", run)
        for trial in doc["stop_trials"]:
            self.assertTrue(trial["verdict"])

    def test_quick_cpu_budget_rows_say_what_they_measured(self):
        rows = {row["figure"]: row for row in self.doc["budgets"]}
        for transport, size, budget_size in (("plain HTTP", max(bench.QUICK_SIZES), bench.BUDGET_CPU_SIZE),
                                             ("HTTPS", bench.QUICK_TLS_SIZE, bench.BUDGET_TLS_SIZE)):
            figure = "CPU per GiB, node/floor, %s at %s (--quick; budget at %s)" % (
                transport, bench.size_label(size), bench.size_label(budget_size))
            self.assertIn(figure, rows)
            self.assertRegex(rows[figure]["this_run"], r"^\d+\.\d\dx \(\d+\.\d\d / \d+\.\d\d s\)$")
            self.assertIsNone(rows[figure]["met"], "a quick run judges no CPU budget")

    def test_no_credential_anywhere(self):
        with open(self.json_path, encoding="utf-8") as handle:
            raw = handle.read()
        for where, text in (("stdout", self.out), ("stderr", self.err), ("--json", raw)):
            self.assertNotIn("CANARY", text, where)
            self.assertNotIn("X-Amz-", text, where)

    def test_leaves_no_scratch(self):
        self.assertEqual(os.listdir(self.tmpdir), [])

    def test_readme_performance_section_has_the_same_tables(self):
        section = readme_performance()
        self.assertIsNotNone(section, "conformance/bench/README.md has no '## The step node' section")
        self.assertIn("make bench", section)
        for title in bench.TABLE_TITLES:
            self.assertIn(title, section)
        pasted = [_normalise(line) for line in section.splitlines()]
        for header in header_rows(self.out):
            self.assertIn(header, pasted, "a table heading of the bench is not in conformance/bench/README.md")


class CpuBudgets(unittest.TestCase):
    """The CPU budgets: the node's median CPU per GiB over the floor's, from one run."""

    def test_ratio_is_rounded_as_printed(self):
        self.assertEqual(bench.cpu_ratio(2.64, 2.42), 1.09)
        self.assertEqual(bench.cpu_ratio(2.3008, 2.0), 1.15)
        self.assertIsNone(bench.cpu_ratio(None, 2.42))
        self.assertIsNone(bench.cpu_ratio(2.64, None))
        self.assertIsNone(bench.cpu_ratio(2.64, 0.0))

    def test_met(self):
        self.assertEqual(bench.cpu_ratio_budget("plain HTTP", bench.GiB, bench.GiB, 2.64, 2.42, 1.15),
                         ("CPU per GiB, node/floor, plain HTTP at 1 GiB", "<= 1.15x", "1.09x (2.64 / 2.42 s)", True))

    def test_met_at_the_limit_as_printed(self):
        figure, budget, got, met = bench.cpu_ratio_budget("plain HTTP", bench.GiB, bench.GiB, 2.3008, 2.0, 1.15)
        self.assertEqual((budget, got, met), ("<= 1.15x", "1.15x (2.30 / 2.00 s)", True))

    def test_not_met(self):
        self.assertEqual(bench.cpu_ratio_budget("HTTPS", 256 * bench.MiB, 256 * bench.MiB, 5.19, 3.68, 1.25),
                         ("CPU per GiB, node/floor, HTTPS at 256 MiB", "<= 1.25x", "1.41x (5.19 / 3.68 s)", False))
        self.assertFalse(bench.cpu_ratio_budget("plain HTTP", bench.GiB, bench.GiB, 2.32, 2.0, 1.15)[3])

    def test_unmeasured_is_not_judged(self):
        for node_cpu, floor_cpu in ((None, 2.42), (2.64, None), (None, None)):
            row = bench.cpu_ratio_budget("plain HTTP", bench.GiB, bench.GiB, node_cpu, floor_cpu, 1.15)
            self.assertEqual(row[2:], ("not measured", None))

    def test_another_size_is_shown_but_not_judged(self):
        figure, _, got, met = bench.cpu_ratio_budget("plain HTTP", 64 * bench.MiB, bench.GiB, 9.0, 3.0, 1.15)
        self.assertEqual(figure, "CPU per GiB, node/floor, plain HTTP at 64 MiB (--quick; budget at 1 GiB)")
        self.assertEqual((got, met), ("3.00x (9.00 / 3.00 s)", None))

    def _bench(self, sizes, tls_size):
        node, vs = core.Program("node", [], "node"), core.Program("vs", [], "node")
        made = bench.Bench(node, vs, sizes, 1, tls_size, 1, 1.0, 1, ())
        self.addCleanup(made.ctx.close)
        return made

    @staticmethod
    def _figures(sizes, tls_size, plain, tls):
        """Figures with these medians: plain = {size: (node, floor)}, tls = (node, floor)."""
        stat = lambda median: {"cpu_s_per_gib": None if median is None else
                               {"median": median, "min": median, "max": median, "n": 1}}
        copies = {bench.size_label(size): {"node": stat(plain.get(size, (None, None))[0]),
                                           "floor": stat(plain.get(size, (None, None))[1])} for size in sizes}
        return {"copies": copies, "tls": {"size": bench.size_label(tls_size),
                                          "programs": {"node": {"tls": stat(tls[0])},
                                                       "floor": {"tls": stat(tls[1])}}}}

    def test_a_full_run_is_judged_at_the_budget_sizes(self):
        made = self._bench(bench.SIZES, bench.TLS_SIZE)
        figures = self._figures(bench.SIZES, bench.TLS_SIZE,
                                {64 * bench.MiB: (9.0, 1.0), bench.GiB: (2.64, 2.42)}, (5.19, 3.68))
        self.assertEqual(made.cpu_budgets(figures), [
            ("CPU per GiB, node/floor, plain HTTP at 1 GiB", "<= 1.15x", "1.09x (2.64 / 2.42 s)", True),
            ("CPU per GiB, node/floor, HTTPS at 256 MiB", "<= 1.25x", "1.41x (5.19 / 3.68 s)", False)])

    def test_a_failed_node_is_not_measured(self):
        made = self._bench(bench.SIZES, bench.TLS_SIZE)
        figures = self._figures(bench.SIZES, bench.TLS_SIZE, {bench.GiB: (None, 2.42)}, (None, 3.68))
        self.assertEqual([row[2:] for row in made.cpu_budgets(figures)], [("not measured", None)] * 2)

    def test_a_quick_run_shows_its_own_sizes_unjudged(self):
        made = self._bench(bench.QUICK_SIZES, bench.QUICK_TLS_SIZE)
        figures = self._figures(bench.QUICK_SIZES, bench.QUICK_TLS_SIZE, {64 * bench.MiB: (4.0, 3.2)}, (6.0, 4.0))
        self.assertEqual(made.cpu_budgets(figures), [
            ("CPU per GiB, node/floor, plain HTTP at 64 MiB (--quick; budget at 1 GiB)", "<= 1.15x",
             "1.25x (4.00 / 3.20 s)", None),
            ("CPU per GiB, node/floor, HTTPS at 16 MiB (--quick; budget at 256 MiB)", "<= 1.25x",
             "1.50x (6.00 / 4.00 s)", None)])

    def test_readme_shows_both_cpu_budget_rows_of_a_full_run(self):
        section = readme_performance()
        self.assertIsNotNone(section, "conformance/bench/README.md has no '## The step node' section")
        for transport, size, limit in (("plain HTTP", bench.BUDGET_CPU_SIZE, bench.BUDGET_CPU_OVER_FLOOR),
                                       ("HTTPS", bench.BUDGET_TLS_SIZE, bench.BUDGET_TLS_CPU_OVER_FLOOR)):
            figure, budget, _, _ = bench.cpu_ratio_budget(transport, size, size, 1.0, 1.0, limit)
            row = r"(?m)^%s +%s +\d+\.\d\dx \(" % (re.escape(figure), re.escape(budget))
            self.assertTrue(re.search(row, section), "README's budget table has no row %r: paste a new run" % figure)


class MakeTarget(unittest.TestCase):
    def test_make_bench_runs_the_bench(self):
        with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as handle:
            text = handle.read()
        match = re.search(r"^bench:.*\n((?:\t.*\n)+)", text, re.M)
        self.assertIsNotNone(match, "the Makefile has no bench target")
        self.assertIn("-m conformance.bench", match.group(1))


class Pieces(unittest.TestCase):
    def test_sizes_above_the_object_ceiling_are_split(self):
        items = bench.copy_inputs(2 * bench.GiB)
        self.assertEqual([i.generated for i in items], [bench.GiB, bench.GiB])
        self.assertEqual(len({i.relpath for i in items}), 2)
        self.assertEqual([i.generated for i in bench.copy_inputs(64 * bench.MiB)], [64 * bench.MiB])

    def test_statistics(self):
        self.assertEqual(core.median_range([3.0, 1.0, 2.0]), {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3})
        self.assertIsNone(core.median_range([None]))
        self.assertEqual(core.p95(list(range(1, 21))), 19)
        self.assertEqual(core.p95([5]), 5)
        intercept, slope = bench.fit_line([(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)])
        self.assertAlmostEqual(intercept, 1.0)
        self.assertAlmostEqual(slope, 2.0)
        self.assertIsNone(bench.fit_line([(1.0, 2.0), (1.0, 3.0)]))

    def test_labels(self):
        self.assertEqual(core.size_label(core.GiB), "1 GiB")
        self.assertEqual(core.size_label(256 * core.MiB), "256 MiB")

    def test_bad_usage_exits_2(self):
        proc = subprocess.run([sys.executable, "-m", "conformance.bench", "--reps", "0"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=SHORT_TIMEOUT_S)
        self.assertEqual(proc.returncode, 2)


if __name__ == "__main__":
    unittest.main()
