"""What the checks that run a node as another user need of the files it reads (conformance/checks/_unprivileged.py).

A root harness starts the node as uid 65534 for the dumpability checks. That user must reach the
node's files: conformance.pyz extracts itself, CA file included, under root's home, which other
users cannot search, so the CA file is copied where they can (reachable_copy), and a file still out
of reach ends the check in a SKIP whose reason names the directory that hides it.

Run: python3 -m unittest conformance.tests.test_unprivileged -v
"""

import os
import shutil
import tempfile
import unittest

from conformance.checks import _unprivileged


class Skipped(Exception):
    pass


class FakeContext(object):
    """The little of a check's context these functions use."""

    def __init__(self, tmp, node_path):
        self.tmp = tmp
        self.node = _unprivileged.NodeSpec(["/usr/bin/python3", node_path], node_path, "node.py")

    def tmpdir(self, name):
        path = os.path.join(self.tmp, name)
        os.makedirs(path, exist_ok=True)
        return path

    def skip(self, reason):
        raise Skipped(reason)


class ReachTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-unprivileged-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        os.chmod(self.tmp, 0o755)
        self.hidden = os.path.join(self.tmp, "home")  # like /root: no o+x
        os.mkdir(self.hidden, 0o700)
        self.ca = os.path.join(self.hidden, "cache", "ca.pem")
        os.mkdir(os.path.dirname(self.ca))
        with open(self.ca, "w") as handle:
            handle.write("a certificate\n")
        self.check_tmp = os.path.join(self.tmp, "check")
        os.mkdir(self.check_tmp, 0o700)

    def test_unsearchable_names_the_directory_and_the_entry_below_it(self):
        self.assertEqual(_unprivileged.unsearchable(self.ca), [(self.hidden, "cache")])
        self.assertEqual(_unprivileged.unsearchable(self.check_tmp), [])

    def test_a_hidden_file_is_copied_where_another_user_reads_it(self):
        ctx = FakeContext(self.check_tmp, os.path.join(self.tmp, "node.py"))
        copy = _unprivileged.reachable_copy(ctx, self.ca)
        self.assertNotEqual(copy, self.ca)
        self.assertEqual(_unprivileged.unsearchable(copy), [])
        self.assertEqual(os.stat(copy).st_mode & 0o777, 0o644)
        with open(copy) as handle:
            self.assertEqual(handle.read(), "a certificate\n")

    def test_a_reachable_file_is_used_as_it_is(self):
        ctx = FakeContext(self.check_tmp, os.path.join(self.tmp, "node.py"))
        reachable = os.path.join(self.tmp, "ca.pem")
        shutil.copyfile(self.ca, reachable)
        self.assertEqual(_unprivileged.reachable_copy(ctx, reachable), reachable)

    @unittest.skipUnless(os.geteuid() == 0, "the harness starts a node as another user only as root")
    def test_a_node_out_of_reach_is_skipped_naming_what_hides_it(self):
        node = os.path.join(self.hidden, "node.py")
        open(node, "w").close()
        with self.assertRaises(Skipped) as raised:
            _unprivileged.unprivileged_node(FakeContext(self.check_tmp, node))
        reason = str(raised.exception)
        self.assertIn("other users cannot search ", reason)
        self.assertIn("%s (on the way to %s)" % (self.hidden, node), reason)
        self.assertIn("o+x", reason)
