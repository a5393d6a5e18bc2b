"""The crawler bench: the quick run works and prints the tables the README quotes.

Judged on structure only (every table heading, both stop phases, a figure in
every cell); the numbers belong to `python3 -m conformance.bench crawler`.
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The quick run takes about 5 s; this only bounds a hung run.
QUICK_RUN_TIMEOUT_S = 180

HEADINGS = ("| source | x result bound | peak RSS MiB (node + child) | wall s |",
            "| SIGTERM during | stop latency ms | exit 143 | cancelled bundle stored |")


@unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "check-fast skips the quick crawler bench run")
class QuickCrawlerBenchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        before = set(os.listdir(tempfile.gettempdir()))
        proc = subprocess.run([sys.executable, "-m", "conformance.bench", "crawler", "--quick"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=QUICK_RUN_TIMEOUT_S)
        cls.status, cls.out = proc.returncode, proc.stdout.decode()
        cls.err = proc.stderr.decode()
        cls.left = sorted(n for n in set(os.listdir(tempfile.gettempdir())) - before
                          if n.startswith("conformance-bench-crawler-"))

    def test_runs_and_prints_both_tables(self):
        self.assertEqual(self.status, 0, self.err[-2000:])
        for heading in HEADINGS:
            self.assertIn(heading, self.out)

    def test_every_cell_has_a_figure(self):
        rows = [line for line in self.out.splitlines() if line.startswith("| ") and "---" not in line
                and line not in HEADINGS]
        self.assertEqual(len(rows), 4, self.out)
        for row in rows:
            self.assertNotIn("| - |", row, row)
        self.assertEqual(len(re.findall(r"\| 3/3 \| 3/3 \|", self.out)), 2, self.out)

    def test_readme_quotes_the_same_headings(self):
        with open(os.path.join(ROOT, "conformance", "bench", "README.md"), encoding="utf-8") as handle:
            readme = handle.read()
        for heading in HEADINGS:
            self.assertIn(heading, readme)

    def test_leaves_no_scratch(self):
        self.assertEqual(self.left, [])


if __name__ == "__main__":
    unittest.main()
