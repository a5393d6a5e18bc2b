"""make dist: the harness as one file (conformance/dist.py), run from outside the repository."""

import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest
import zipfile

from conformance import __version__, dist, mutants

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PUBLIC_CONTRACTS = ("step", "crawler", "scan", "session")


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
        for contract in PUBLIC_CONTRACTS:
            self.assertRegex(out, r"contract %s version \d+" % contract)

    def test_every_contract_loads_all_its_checks_from_the_archive(self):
        # Every module a check imports must be in the archive: scan and session were once
        # unusable from it, their shared _unprivileged.py left out with the private contracts.
        for contract in PUBLIC_CONTRACTS:
            with self.subTest(contract=contract):
                here = subprocess.run([sys.executable, "-m", "conformance", contract, "--list"], cwd=ROOT,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                                      timeout=120)
                status, out = self.run_archive(contract, "--list")
                self.assertEqual(status, 0, out[-2000:])
                self.assertEqual(out.splitlines()[-1], here.stdout.splitlines()[-1])  # "N checks"

    def test_it_judges_a_node_from_another_directory_and_writes_nothing_there(self):
        node = os.path.join(ROOT, "nodes", "hello_node.py")
        status, out = self.run_archive("step", node, "--only", "exit.codes,node.*")
        self.assertEqual(status, 0, out)
        self.assertIn("conformance: 5 passed, 0 failed, 0 not judged, 0 skipped", out)
        status, out = self.run_archive("step", "--only", "exit.codes", "--", sys.executable, node)
        self.assertEqual(status, 0, out)
        self.assertIn("1 passed, 0 failed", out)
        self.assertEqual(os.listdir(self.cwd), [])
        self.assertEqual(sorted(os.listdir(os.path.dirname(self.archive))), ["conformance.pyz"])

    def test_help_and_rerun_lines_name_the_archive_as_the_user_typed_it(self):
        # A user's own repository: a broken copy of the hello node, the archive one directory up.
        user = os.path.join(self.tmp.name, "user")
        os.mkdir(user)
        broken = [m for m in mutants.load_all("step") if m.name == "every_refusal_permanent"][0]
        with open(os.path.join(ROOT, broken.node), encoding="utf-8") as handle:
            text = mutants.apply(handle.read(), broken.replace)
        with open(os.path.join(user, "my_node.py"), "w", encoding="utf-8") as handle:
            handle.write(text)
        typed = os.path.relpath(self.archive, user)
        run = subprocess.run([sys.executable, typed, "--help"], cwd=user, env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, universal_newlines=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stdout)
        self.assertIn("usage: python3 %s CONTRACT NODE [options]" % typed, run.stdout)
        self.assertIn("python3 %s step my_node.py --only 'stop.*' -v" % typed, run.stdout)
        self.assertNotIn("-m conformance", run.stdout)
        self.assertNotIn("nodes/hello_node.py", run.stdout)   # the user has no reference nodes
        run = subprocess.run([sys.executable, typed, "step", "my_node.py", "--only", "exit.codes"], cwd=user,
                             env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                             timeout=300)
        self.assertEqual(run.returncode, 1, run.stdout)
        rerun = re.search(r"^\s*Rerun:\s+(.*)$", run.stdout, re.M).group(1)
        self.assertEqual(rerun, "python3 %s step my_node.py --only exit.codes --seed 0" % typed)
        again = subprocess.run(shlex.split(rerun), cwd=user, env=self.env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
        self.assertEqual(again.returncode, 1, again.stdout)
        self.assertIn("conformance: 0 passed, 1 failed, 0 not judged, 0 skipped", again.stdout)
        self.assertRegex(again.stdout, r"(?m)^\s+FAIL\s+exit\.codes\s")


if __name__ == "__main__":
    unittest.main()
