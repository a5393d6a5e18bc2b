"""make dist: the harness as one file (conformance/dist.py), run from outside the repository."""

import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

from conformance import __version__, dist

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class DistTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        os.chmod(cls.tmp.name, 0o755)  # a node run as PID 1 may need to read below it
        cls.archive, cls.count = dist.build(os.path.join(cls.tmp.name, "out", "conformance.pyz"))
        cls.cwd = os.path.join(cls.tmp.name, "elsewhere")
        os.mkdir(cls.cwd)
        cls.env = dict(os.environ, XDG_CACHE_HOME=os.path.join(cls.tmp.name, "cache"))
        cls.env.pop("PYTHONPATH", None)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_archive(self, *args):
        done = subprocess.run([sys.executable, self.archive] + list(args), cwd=self.cwd, env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                              timeout=300)
        return done.returncode, done.stdout

    def test_the_archive_holds_the_harness_and_what_it_reads_and_nothing_else(self):
        with zipfile.ZipFile(self.archive) as zipped:
            names = set(zipped.namelist())
        for needed in ("__main__.py", "conformance/cli.py", "conformance/ca/ca.pem", "contract/step.md",
                       "contract/crawler.md", "conformance/checks/step/stop.py"):
            self.assertIn(needed, names)
        self.assertFalse([n for n in names if n.startswith(("conformance/tests/", "conformance/mutants/", "nodes/",
                                                            "conformance/checks/_selftest/",
                                                            "conformance/checks/_worker/", "contract/examples/"))
                          or "__pycache__" in n])

    def test_the_same_tree_builds_the_same_bytes(self):
        again, _ = dist.build(os.path.join(self.tmp.name, "again", "conformance.pyz"))
        with open(self.archive, "rb") as one, open(again, "rb") as other:
            self.assertEqual(one.read(), other.read())

    def test_version_names_the_harness_and_each_contract(self):
        status, out = self.run_archive("--version")
        self.assertEqual(status, 0, out)
        self.assertIn("conformance %s" % __version__, out)
        self.assertRegex(out, r"contract step version \d+")
        self.assertRegex(out, r"contract crawler version \d+")

    def test_it_judges_a_node_from_another_directory_and_writes_nothing_there(self):
        node = os.path.join(ROOT, "nodes", "hello_node.py")
        status, out = self.run_archive("step", node, "--only", "exit.codes,node.*")
        self.assertEqual(status, 0, out)
        self.assertIn("conformance: 4 passed, 0 failed, 0 skipped", out)
        status, out = self.run_archive("step", "--only", "exit.codes", "--", sys.executable, node)
        self.assertEqual(status, 0, out)
        self.assertIn("1 passed, 0 failed", out)
        self.assertEqual(os.listdir(self.cwd), [])
        self.assertEqual(sorted(os.listdir(os.path.dirname(self.archive))), ["conformance.pyz"])


if __name__ == "__main__":
    unittest.main()
