"""Text the project shows people must match what its commands really print.

README.md pastes the harness's --help and the Makefile's target list;
examples/demo.expected is the demo's output. These tests fail when either
drifts from a real run, so the documents stay true.
"""

import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*argv):
    out = subprocess.run([sys.executable] + list(argv), cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=120)
    return out.returncode, out.stdout.decode("utf-8")


def readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        return handle.read()


class ReadmeTest(unittest.TestCase):
    def test_cli_help_is_pasted_verbatim(self):
        status, text = run("-m", "conformance", "--help")
        self.assertEqual(status, 0)
        # argparse before Python 3.10 titles the options "optional arguments".
        self.assertIn(text.rstrip("\n").replace("optional arguments:", "options:"), readme())

    def test_make_targets_are_pasted_verbatim(self):
        status, text = run("-m", "conformance.suite", "help", "Makefile")
        self.assertEqual(status, 0)
        self.assertIn(text.rstrip("\n"), readme())

    def test_clause_count_is_current(self):
        from conformance import clauses
        for contract in ("step", "crawler"):
            count = len([c for c in clauses.load(contract).clauses.values() if c.level in clauses.LEVELS])
            self.assertIn("`contract/%s.md` is the %s contract: %d numbered clauses"
                          % (contract, "whole step" if contract == "step" else "crawler", count), readme())

    def test_top_level_is_the_documented_layout(self):
        tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, stdout=subprocess.PIPE).stdout.decode()
        if not tracked:
            self.skipTest("not a git checkout")
        top = sorted({line.split("/", 1)[0] for line in tracked.splitlines()})
        self.assertEqual(top, sorted([".ci", ".gitignore", "Makefile", "README.md", "conformance", "contract",
                                      "examples", "nodes"]))


class GuideTest(unittest.TestCase):
    """conformance/README.md (adding a contract) names files and modules: they must exist."""

    def test_every_path_the_guide_names_exists(self):
        with open(os.path.join(ROOT, "conformance", "README.md"), encoding="utf-8") as handle:
            text = handle.read()
        named = set(re.findall(r"`((?:conformance|contract|nodes|examples)/[^`<>* ]+?)`", text))
        self.assertGreater(len(named), 20)
        missing = sorted(path for path in named
                         if not os.path.exists(os.path.join(ROOT, path.split(" ", 1)[0].rstrip("/"))))
        self.assertEqual(missing, [])


class DemoTest(unittest.TestCase):
    def test_demo_prints_its_expected_output(self):
        status, text = run(os.path.join("examples", "demo.py"))
        self.assertEqual(status, 0, text)
        with open(os.path.join(ROOT, "examples", "demo.expected"), encoding="utf-8") as handle:
            expected = handle.read()
        # The only line that depends on the machine: whether the node ran as PID 1.
        self.assertEqual(re.sub(r" \(as PID 1\)", "", text), expected)


if __name__ == "__main__":
    unittest.main()
