"""Static checks: grammar and imports, --help, import without effects."""

import os
import socket
import tempfile
import textwrap
import unittest

from conformance import static
from conformance.checks import FAIL, NON_STRICT, PASS, SKIP, NodeSpec, run_check

GOOD = '''\
"""A good node."""
import argparse
import signal
import sys


def main(argv=None):
    argparse.ArgumentParser(description="good").parse_args(argv)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

# The shape of a reference node, cut down to what node.edit-surface reads.
COPY = GOOD.replace('"""A good node."""', '''"""A copy of a reference node."""''').replace('''

def main(argv=None):''', '''

# 3 Your work [EDIT] ===========================================================
# +- The frame -----------------------------------------------------------------
# | Called, in order: work() once.
# | Your code may use: the names below.
# | Uses from below KEEP: write_all,
# |     (nothing else)
# | To refuse work: return 1.
# +-----------------------------------------------------------------------------


def work(config=None):
    """[EDIT]"""
    local = config
    return write_all(1, b"x")


# ---- Below this line: contract machinery [KEEP] ----
# 4 Limits =====================================================================
EXIT_DONE = 0


def write_all(fd, data):
    return None


def main(argv=None):''')


class JudgeSourceTest(unittest.TestCase):
    def test_good_source(self):
        self.assertEqual(static.judge_source(GOOD), [])
        self.assertEqual(static.judge_source("from __future__ import annotations\nimport os.path\n"
                                             "from concurrent.futures import Future\nif (n := 1): pass\n"), [])

    def test_newer_grammar_is_refused(self):
        problems = static.judge_source("match x:\n    case 1:\n        pass\n")
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith("does not parse as Python 3.9: line "), problems)
        self.assertTrue(static.judge_source("try:\n    pass\nexcept* ValueError:\n    pass\n"))
        self.assertTrue(static.judge_source("x = (1,\n"))

    def test_imports(self):
        source = textwrap.dedent("""\
            import os, requests
            from yaml import safe_load
            from . import sibling
            import tomllib
            import cgi
            import importlib
            importlib.import_module("numpy.linalg")
            __import__("json")
            """)
        problems = static.judge_source(source)
        self.assertEqual(problems, [
            "line 1: import requests: not a standard-library module",
            "line 2: from-import yaml: not a standard-library module",
            "line 3: relative import .: a single-file node cannot import its neighbours",
            "line 4: import tomllib: added in Python 3.11 (absent from 3.9 and 3.10)",
            "line 5: import cgi: removed in Python 3.13",
            "line 7: import_module numpy: not a standard-library module",
        ])

    def test_module_list_covers_what_nodes_use(self):
        for name in ("argparse", "hashlib", "hmac", "http", "json", "os", "select", "selectors", "signal", "socket",
                     "ssl", "tempfile", "threading", "time", "urllib", "zoneinfo", "graphlib", "_thread"):
            self.assertIn(name, static.STDLIB_MODULES)
        for name in static.NOT_PORTABLE:
            self.assertNotIn(name, static.STDLIB_MODULES)


class ProbeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-static-")

    def tearDown(self):
        import shutil
        shutil.rmtree(self.tmp, ignore_errors=True)

    def node(self, source, name="node.py"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as handle:
            handle.write(source)
        return path

    def kinds(self, report):
        return sorted(set(e[0] for e in report["events"]))

    def test_clean_import(self):
        report = static.run_probe(self.node(GOOD), "import")
        self.assertTrue(report["reported"])
        self.assertEqual(report["events"], [])
        self.assertEqual(report["created"], [])
        self.assertEqual(report["outcome"], {"exit": None, "exception": None})

    def test_effects_at_import_are_recorded(self):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        self.addCleanup(listener.close)
        port = listener.getsockname()[1]
        source = textwrap.dedent("""\
            import os, signal, socket, subprocess, threading
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            socket.create_connection(("127.0.0.1", %d)).close()
            open("left-behind.txt", "w").close()
            threading.Thread(target=lambda: None).start()
            subprocess.run(["true"])
            """ % port)
        report = static.run_probe(self.node(source), "import")
        self.assertEqual(self.kinds(report), ["file", "network", "process", "signal", "thread"])
        self.assertEqual(report["created"], ["cwd/left-behind.txt"])

    def test_main_run_at_import_is_seen(self):
        report = static.run_probe(self.node("import sys\nsys.exit(3)\n"), "import")
        self.assertEqual(report["outcome"]["exit"], 3)
        report = static.run_probe(self.node("import os\nos.environ['NEEDED']\n"), "import")
        self.assertIn("KeyError", report["outcome"]["exception"])

    def test_help_mode_sees_reads_outside_the_stdlib(self):
        secret = self.node("{}", "config.json")
        source = GOOD.replace("    return 0", "    open(%r).read()\n    return 0" % secret)
        report = static.run_probe(self.node(source), "help", ["--help"])
        self.assertEqual(report["events"], [])  # argparse exits before main reaches the read
        source = GOOD.replace("argparse.ArgumentParser", "open(%r).read()\n    argparse.ArgumentParser" % secret)
        report = static.run_probe(self.node(source), "help", ["--help"])
        self.assertEqual(self.kinds(report), ["read"])
        self.assertEqual(report["outcome"]["exit"], 0)


class StaticChecksTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-static-")
        self.checks = dict((c.id, c) for c in static.checks_for("step") if c.area == "NODE")

    def tearDown(self):
        import shutil
        shutil.rmtree(self.tmp, ignore_errors=True)

    def verdicts(self, source):
        path = os.path.join(self.tmp, "n.py")
        with open(path, "w") as handle:
            handle.write(source)
        node = NodeSpec.from_path(path)
        return dict((i, run_check(c, node)) for i, c in self.checks.items())

    def test_records(self):
        self.assertEqual([c.clauses[0] for c in self.checks.values()],
                         ["STEP-NODE-1", "STEP-NODE-2", "STEP-NODE-3", "STEP-NODE-4"])
        self.assertEqual([c.level for c in self.checks.values()], ["MUST", "SHOULD", "MUST", "SHOULD"])
        self.assertTrue(all(c.area == "NODE" and c.module == static.__name__ for c in self.checks.values()))
        undocumented = static.checks_for("no_document")
        self.assertEqual([c.clauses[0] for c in undocumented], ["NODOCUMENT-NODE-1", "NODOCUMENT-NODE-2",
                                                                 "NODOCUMENT-NODE-3"])
        self.assertEqual([c.level for c in undocumented], ["MUST", "SHOULD", "MUST"])
        # no reference node to copy, no clause: no frame check (the harness's own toy contracts)
        self.assertNotIn("node.edit-surface", [c.id for c in static.checks_for("_selftest")])
        # scan and session had a NODE-4 of their own (idle cost) before the frame check came
        self.assertEqual([c.clauses[0] for c in static.checks_for("scan") if c.id == "node.edit-surface"],
                         ["SCAN-NODE-5"])

    def test_good_node_passes(self):
        results = self.verdicts(GOOD)
        self.assertEqual(dict((i, r.verdict) for i, r in results.items()),
                         {"node.stdlib": PASS, "node.help": PASS, "node.import": PASS, "node.edit-surface": SKIP})
        self.assertIn("no KEEP line", results["node.edit-surface"].reason)

    def test_edit_surface_judges_a_copy(self):
        listed = self.verdicts(COPY)["node.edit-surface"]
        self.assertEqual(listed.verdict, PASS, listed.actual)
        reaching = self.verdicts(COPY.replace("    return write_all(1, b\"x\")",
                                              "    write_all(1, b\"x\")\n    return EXIT_DONE"))["node.edit-surface"]
        self.assertEqual(reaching.verdict, NON_STRICT)  # a SHOULD
        self.assertIn("reads EXIT_DONE", reaching.actual)
        boxless = self.verdicts(COPY.replace("# +- The frame", "# +- A frame"))["node.edit-surface"]
        self.assertEqual(boxless.verdict, NON_STRICT)
        self.assertIn("no frame box", boxless.actual)
        late = COPY.replace("    local = config\n", "    local = datetime.date.today()\n").replace(
            "def write_all(fd, data):", "def late_imports():\n    global datetime\n    import datetime\n\n\ndef write_all(fd, data):")
        reading = self.verdicts(late)["node.edit-surface"]
        self.assertEqual(reading.verdict, NON_STRICT, reading.actual)
        self.assertIn("reads datetime, bound only once late_imports() has run", reading.actual)
        imported = self.verdicts(late.replace("import sys\n", "import sys\nimport datetime\n", 1))["node.edit-surface"]
        self.assertEqual(imported.verdict, PASS, imported.actual)

    def test_bad_node_fails(self):
        source = GOOD.replace("import sys\n", "import sys\nimport yaml_not_here\n")
        results = self.verdicts(source)
        self.assertEqual(results["node.stdlib"].verdict, FAIL)
        self.assertIn("yaml_not_here", results["node.stdlib"].actual)
        self.assertEqual(results["node.help"].verdict, NON_STRICT)  # a SHOULD
        self.assertEqual(results["node.import"].verdict, FAIL)
        noisy = GOOD.replace("import sys\n", "import sys\nimport signal as _s\n_s.signal(_s.SIGINT, _s.SIG_IGN)\n")
        result = self.verdicts(noisy)["node.import"]
        self.assertEqual(result.verdict, FAIL)
        self.assertIn("signal.signal", result.actual)

    def test_help_must_print_usage(self):
        silent = GOOD.replace('argparse.ArgumentParser(description="good").parse_args(argv)', "pass")
        result = self.verdicts(silent)["node.help"]
        self.assertEqual(result.verdict, NON_STRICT)
        self.assertIn("usage", result.expected)

    def test_command_node_is_skipped(self):
        node = NodeSpec.from_command(["python3", "x.py"])
        for item in self.checks.values():
            result = run_check(item, node)
            self.assertEqual(result.verdict, SKIP)
            self.assertIn("not a Python file", result.reason)


if __name__ == "__main__":
    unittest.main()
