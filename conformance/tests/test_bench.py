"""make bench: the quick run works, and the README's Performance section stays true to it.

The quick run (`python3 -m conformance.bench --quick`, well under 60 s) is
judged on its structure only: every table and its column headings, every
stop phase, the JSON document's keys, no credential anywhere, no scratch
left behind. Performance numbers belong to the bench itself, never to a test.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from conformance import bench
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
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        text = handle.read()
    match = re.search(r"^## Performance\n(.*?)(?=^## |\Z)", text, re.M | re.S)
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
        self.assertIsNotNone(section, "README.md has no '## Performance' section")
        self.assertIn("make bench", section)
        for title in bench.TABLE_TITLES:
            self.assertIn(title, section)
        pasted = [_normalise(line) for line in section.splitlines()]
        for header in header_rows(self.out):
            self.assertIn(header, pasted, "a table heading of the bench is not in README's Performance section")


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
        self.assertEqual(bench.median_range([3.0, 1.0, 2.0]), {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3})
        self.assertIsNone(bench.median_range([None]))
        self.assertEqual(bench.p95(list(range(1, 21))), 19)
        self.assertEqual(bench.p95([5]), 5)
        intercept, slope = bench.fit_line([(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)])
        self.assertAlmostEqual(intercept, 1.0)
        self.assertAlmostEqual(slope, 2.0)
        self.assertIsNone(bench.fit_line([(1.0, 2.0), (1.0, 3.0)]))

    def test_labels(self):
        self.assertEqual(bench.size_label(bench.GiB), "1 GiB")
        self.assertEqual(bench.size_label(256 * bench.MiB), "256 MiB")

    def test_bad_usage_exits_2(self):
        proc = subprocess.run([sys.executable, "-m", "conformance.bench", "--reps", "0"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=SHORT_TIMEOUT_S)
        self.assertEqual(proc.returncode, 2)


if __name__ == "__main__":
    unittest.main()
