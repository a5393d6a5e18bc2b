"""The command line as CI and people at a terminal meet it: progress as it goes, interruption, bad paths.

Each test runs the harness as a subprocess (a pipe, a signal, an exit status
are what it is about) on the toy contract `_selftest`, with a copy of the toy
node made slow where a test needs time to act.
"""

import contextlib
import glob
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from conformance import cli
from conformance.clauses import REPO_ROOT

TOY = os.path.join(REPO_ROOT, "conformance", "tests", "data", "toy_node.py")


def slow_toy(directory, seconds):
    """A copy of the toy node that waits `seconds` before it greets (so a check of it takes that long)."""
    with open(TOY, encoding="utf-8") as handle:
        text = handle.read()
    text = text.replace('    print("hello, %s" % name, flush=True)',
                        '    time.sleep(%r)\n    print("hello, %%s" %% name, flush=True)' % seconds, 1)
    path = os.path.join(directory, "slow_toy.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


class Harness(object):
    """`python3 -m conformance ...` started with its own TMPDIR, stdout read line by line with arrival times."""

    def __init__(self, test, *args):
        self.scratch = tempfile.mkdtemp(prefix="conformance-cli-test-")
        test.addCleanup(shutil.rmtree, self.scratch, True)
        env = dict(os.environ, TMPDIR=self.scratch, PYTHONPATH=REPO_ROOT)
        self.proc = subprocess.Popen([sys.executable, "-m", "conformance"] + list(args), cwd=REPO_ROOT, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        test.addCleanup(self._kill)
        self.lines = []

    def _kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()

    def read_until(self, predicate, timeout):
        """Read stdout lines until one satisfies predicate; that line, or None at EOF or timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            raw = self.proc.stdout.readline()
            if not raw:
                return None
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append((time.monotonic(), line))
            if predicate(line):
                return line
        return None

    def finish(self, timeout):
        for raw in self.proc.stdout:
            self.lines.append((time.monotonic(), raw.decode("utf-8", "replace").rstrip("\n")))
        status = self.proc.wait(timeout)
        return status, self.proc.stderr.read().decode("utf-8", "replace")


class ProgressTest(unittest.TestCase):
    def test_a_pipe_gets_a_line_per_check_as_each_finishes(self):
        directory = tempfile.mkdtemp(prefix="conformance-cli-node-")
        self.addCleanup(shutil.rmtree, directory, True)
        node = slow_toy(directory, 2.0)
        harness = Harness(self, "_selftest", node, "--only", "node.stdlib,greet.hello", "--jobs", "1")
        first = harness.read_until(lambda line: "node.stdlib" in line, 60)
        self.assertIsNotNone(first, harness.lines)
        self.assertRegex(first, r"^\[1/2\] PASS\s+node\.stdlib  \d+\.\d\d s$")
        seen_at = harness.lines[-1][0]
        status, err = harness.finish(60)
        self.assertEqual(status, 0, err)
        ended_at = harness.lines[-1][0]
        # The first line came while the slow check still ran, not with the report at the end.
        self.assertGreater(ended_at - seen_at, 1.0)
        texts = [line for _t, line in harness.lines]
        self.assertEqual(texts[0], "conformance _selftest %s: 2 checks, jobs 1" % node)
        self.assertEqual(len([t for t in texts if t.startswith("[")]), 2)
        self.assertEqual(texts[-1], "conformance: 2 passed, 0 failed, 0 not judged, 0 skipped")

    def test_a_terminal_gets_no_lines_in_its_report(self):
        class Tty(io.StringIO):
            def isatty(self):
                return True
        out = Tty()
        with contextlib.redirect_stderr(io.StringIO()):
            status = cli.main(["_selftest", TOY, "--only", "greet.hello"], out=out)
        self.assertEqual(status, 0)
        self.assertFalse([line for line in out.getvalue().splitlines() if line.startswith("[")])


class InterruptTest(unittest.TestCase):
    """Ctrl-C or a CI timeout: nodes killed, scratch removed, reports of what finished, marked incomplete."""

    def interrupt(self, signum, expected_status):
        directory = tempfile.mkdtemp(prefix="conformance-cli-node-")
        self.addCleanup(shutil.rmtree, directory, True)
        node = slow_toy(directory, 120.0)
        report = os.path.join(directory, "report.json")
        junit = os.path.join(directory, "report.xml")
        harness = Harness(self, "_selftest", node, "--only", "node.stdlib,greet.*", "--jobs", "2",
                          "--json", report, "--junit", junit)
        self.assertIsNotNone(harness.read_until(lambda line: "node.stdlib" in line, 60), harness.lines)
        time.sleep(0.5)  # the greet checks' nodes are running (and will not exit for two minutes)
        sent = time.monotonic()
        harness.proc.send_signal(signum)
        status, err = harness.finish(cli.INTERRUPT_GRACE_S + 30)
        self.assertEqual(status, expected_status, err)
        self.assertLess(time.monotonic() - sent, cli.INTERRUPT_GRACE_S + 10)
        self.assertNotIn("Traceback", err)
        texts = [line for _t, line in harness.lines]
        self.assertIn("INCOMPLETE: interrupted by %s after 1 of 3 checks: the checks under way were stopped and "
                      "are not in this report" % signal.Signals(signum).name, texts)
        self.assertEqual(texts[-1], "conformance: 1 passed, 0 failed, 0 not judged, 0 skipped")
        with open(report, encoding="utf-8") as handle:
            document = json.load(handle)
        self.assertIn("interrupted by", document["incomplete"])
        self.assertEqual([c["id"] for c in document["checks"]], ["node.stdlib"])
        with open(junit, encoding="utf-8") as handle:
            self.assertIn('name="incomplete"', handle.read())
        self.assertEqual(os.listdir(harness.scratch), [])
        left = subprocess.run(["pgrep", "-f", node], stdout=subprocess.PIPE).stdout.split()
        self.assertEqual(left, [])

    def test_sigint(self):
        self.interrupt(signal.SIGINT, 130)

    def test_sigterm(self):
        self.interrupt(signal.SIGTERM, 143)


def pyenv_pythons(pattern):
    """Interpreters pyenv keeps here whose version matches the glob (e.g. "3.9.*"), oldest first."""
    return sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/%s/bin/python3" % pattern)))


class PythonOptionTest(unittest.TestCase):
    """--python runs a node file under another interpreter, static checks included, and every report names it."""

    def test_the_node_runs_under_the_interpreter_named_and_the_reports_say_so(self):
        older = pyenv_pythons("3.9.*") or pyenv_pythons("3.10.*")
        if not older:
            self.skipTest("no Python 3.9 or 3.10 besides the harness's own on this machine")
        python = older[0]
        directory = tempfile.mkdtemp(prefix="conformance-cli-node-")
        self.addCleanup(shutil.rmtree, directory, True)
        with open(TOY, encoding="utf-8") as handle:
            text = handle.read()
        # This copy refuses to greet under the harness's own interpreter: it passes only under the older one.
        text = text.replace("    name = os.environ.get(", "    if sys.version_info[:2] == %r:\n        return 3\n"
                            "    name = os.environ.get(" % (tuple(sys.version_info[:2]),), 1)
        node = os.path.join(directory, "toy.py")
        with open(node, "w", encoding="utf-8") as handle:
            handle.write(text)
        report = os.path.join(directory, "r.json")
        out = io.StringIO()
        with contextlib.redirect_stderr(io.StringIO()):
            status = cli.main(["_selftest", node, "--python", python, "--only", "node.*,greet.hello",
                               "--json", report], out=out)
        self.assertEqual(status, 0, out.getvalue())
        with open(report, encoding="utf-8") as handle:
            document = json.load(handle)
        self.assertRegex(document["interpreter"], r"^%s \(Python 3\.(9|10)\.\d+\)$" % re.escape(python))
        self.assertEqual([c["verdict"] for c in document["checks"]], ["PASS"] * 4)
        self.assertIn("  interpreter: %s (Python 3." % python, out.getvalue())
        # Under its own interpreter the same copy fails, and the rerun line names no --python.
        out = io.StringIO()
        with contextlib.redirect_stderr(io.StringIO()):
            status = cli.main(["_selftest", node, "--only", "greet.hello"], out=out)
        self.assertEqual(status, 1)
        self.assertNotIn("--python", out.getvalue())
        from conformance import checks
        self.assertTrue(checks.repro_command("_selftest", checks.NodeSpec.from_path(node, python=python),
                                             "greet.hello", 0).endswith("--seed 0 --python %s" % python))

    def test_what_it_refuses(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(cli.main(["_selftest", "--python", sys.executable, "--", sys.executable, TOY],
                                      out=io.StringIO()), 2)
            self.assertEqual(cli.main(["_selftest", TOY, "--python", "/no/such/python"], out=io.StringIO()), 2)
        self.assertIn("--python runs a node file", err.getvalue())
        self.assertIn("--python /no/such/python: no executable file there", err.getvalue())
        old = pyenv_pythons("3.[5-8].*")
        if old:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(cli.main(["_selftest", TOY, "--python", old[-1]], out=io.StringIO()), 2)
            self.assertIn("the nodes need 3.9 or newer", err.getvalue())


class UsageTest(unittest.TestCase):
    def run_cli(self, *argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = cli.main(list(argv), out=io.StringIO())
        return status, err.getvalue()

    def test_an_unusable_report_path_is_a_usage_error_before_any_check(self):
        directory = tempfile.mkdtemp(prefix="conformance-cli-paths-")
        self.addCleanup(shutil.rmtree, directory, True)
        missing = os.path.join(directory, "no", "such", "dir", "r.html")
        for argv, expected in (
                (["--html", missing], "--html %s cannot be written" % missing),
                (["--json", directory], "--json %s is a directory" % directory)):
            status, err = self.run_cli("_selftest", TOY, "--only", "greet.hello", *argv)
            self.assertEqual(status, 2)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertIn(expected, err)
        fresh = os.path.join(directory, "fresh.json")
        status, err = self.run_cli("_selftest", TOY, "--only", "no-such-check", "--json", fresh)
        self.assertEqual(status, 2)
        self.assertFalse(os.path.exists(fresh))   # the probe leaves no empty file behind

    def test_an_interpreter_older_than_3_9_is_refused_in_one_line(self):
        old = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.[5-8].*/bin/python3")))
        if not old:
            self.skipTest("no Python older than 3.9 on this machine (pyenv has none)")
        done = subprocess.run([old[-1], "-m", "conformance", "step", "x.py"], cwd=REPO_ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertEqual(done.stdout, "")
        self.assertRegex(done.stderr, r"^conformance: Python 3\.9 or newer is needed; \S+ is 3\.[5-8]\n$")


if __name__ == "__main__":
    unittest.main()
