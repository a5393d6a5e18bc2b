"""The session worker's probe children start from its bytecode of the node file (D54).

Unit tests of the reference node's ProbeCode, imported as a module (importing it does nothing,
SESSION-NODE-3; worker_imports() binds what the worker's own paths use). The checks
isolation.warm-code and isolation.code-changed judge the same through a running worker; these
hold what a check cannot reach: a scratch directory where nothing can be written costs speed,
never the probe, and a child started from the bytecode behaves as one started from the file.

Run: python3 -m unittest conformance.tests.test_session_probe_code -v
"""

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

from conformance.tests import reference_node

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE_FILE = os.path.join(ROOT, "nodes", "session_worker.py")


node = reference_node.load_node("session_worker", "probe_code", worker_imports=True)
NAME_RE = re.compile(r"probe-code-([0-9a-f]{64})\.[A-Za-z0-9_-]+\.pyc")


def _child(program, stdin=b""):
    """(exit status, stderr) of a probe child started from `program` as the node starts one."""
    done = subprocess.run([sys.executable, "-I", "-S", program, node.PROBE_CHILD_FLAG], input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={}, cwd="/", timeout=60)
    return done.returncode, done.stderr


class ProbeCodeTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="probe-code-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.copy = os.path.join(self.tmp, "session_worker.py")
        shutil.copyfile(NODE_FILE, self.copy)
        self.scratch = os.path.join(self.tmp, "scratch")
        os.mkdir(self.scratch, 0o700)
        original = node.node_file
        node.node_file = lambda: self.copy
        self.addCleanup(setattr, node, "node_file", original)

    def test_the_bytecode_is_named_by_the_file_digest_private_and_runs_as_the_file_does(self):
        path = node.ProbeCode(self.scratch).path()
        match = NAME_RE.fullmatch(os.path.basename(path))
        self.assertIsNotNone(match, path)
        self.assertEqual(os.path.dirname(path), self.scratch)
        with open(self.copy, "rb") as handle:
            self.assertEqual(match.group(1), node.sha256_hex(handle.read()))
        self.assertEqual(stat.S_IMODE(os.lstat(path).st_mode), 0o600)
        self.assertEqual(os.listdir(self.scratch), [os.path.basename(path)])  # no .partial left
        # The same input, the same answer: an unreadable input is one failure line and exit 1.
        self.assertEqual(_child(path, b"not json\n"), _child(self.copy, b"not json\n"))

    def test_a_changed_file_gets_new_bytecode_and_an_unchanged_one_the_same(self):
        code = node.ProbeCode(self.scratch)
        first = code.path()
        self.assertEqual(code.path(), first)
        with open(self.copy, "ab") as out:
            out.write(b"\n# changed\n")
        second = code.path()
        self.assertNotEqual(second, first)
        with open(self.copy, "rb") as handle:
            self.assertIn(node.sha256_hex(handle.read()), os.path.basename(second))

    def test_a_scratch_where_nothing_can_be_written_gives_the_node_file(self):
        blocked = os.path.join(self.tmp, "not-a-directory")
        with open(blocked, "wb") as out:
            out.write(b"x")
        code = node.ProbeCode(blocked)
        self.assertEqual(code.path(), self.copy)
        self.assertEqual(code.path(), self.copy)  # remembered: no second try for the same bytes

    def test_bytecode_removed_under_the_session_is_written_again(self):
        code = node.ProbeCode(self.scratch)
        first = code.path()
        os.unlink(first)
        self.assertEqual(code.path(), first)
        self.assertTrue(os.path.isfile(first))


if __name__ == "__main__":
    unittest.main()
