"""Tests for conformance.sync: embedded shared blocks stay identical to nodes/blocks/."""

import contextlib
import io
import os
import shutil
import tempfile
import textwrap
import unittest

from conformance import sync

BLOCK = textwrap.dedent('''\
    """Block `greet` (header: never embedded)."""
    import os

    # ---- block body ----

    def greet():
        return os.sep + "hello"

''')

NODE = textwrap.dedent('''\
    import os
    import sys

    # ---- BEGIN BLOCK greet (nodes/blocks/greet.py) ----
    {body}# ---- END BLOCK greet ----

    print(greet())
''')

BODY = 'def greet():\n    return os.sep + "hello"\n'


class SyncTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)
        os.makedirs(os.path.join(self.root, "nodes", "blocks"))
        self.write("nodes/blocks/greet.py", BLOCK)

    def write(self, relpath, text):
        with open(os.path.join(self.root, relpath), "w", encoding="utf-8") as handle:
            handle.write(text)

    def read(self, relpath):
        with open(os.path.join(self.root, relpath), encoding="utf-8") as handle:
            return handle.read()

    def main(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = sync.main(list(args) + ["--root", self.root])
        return code, out.getvalue(), err.getvalue()

    def test_in_sync_passes(self):
        self.write("nodes/n.py", NODE.format(body=BODY))
        self.assertEqual(self.main("--check"), (0, "", ""))

    def test_check_names_node_and_block_and_changes_nothing(self):
        stale = NODE.format(body='def greet():\n    return "old"\n')
        self.write("nodes/n.py", stale)
        code, _, err = self.main("--check")
        self.assertEqual(code, 1)
        self.assertIn("nodes/n.py: block greet differs from nodes/blocks/greet.py", err)
        self.assertEqual(self.read("nodes/n.py"), stale)

    def test_rewrite_then_check_passes_and_is_idempotent(self):
        self.write("nodes/n.py", NODE.format(body="# stale\n"))
        code, out, _ = self.main()
        self.assertEqual(code, 0)
        self.assertIn("nodes/n.py: rewrote block greet", out)
        self.assertEqual(self.read("nodes/n.py"), NODE.format(body=BODY))
        self.assertEqual(self.main("--check"), (0, "", ""))
        self.assertEqual(self.main(), (0, "", ""))

    def test_empty_region_is_filled(self):
        self.write("nodes/n.py", NODE.format(body=""))
        self.assertEqual(self.main()[0], 0)
        self.assertEqual(self.read("nodes/n.py"), NODE.format(body=BODY))

    def test_node_missing_a_block_import_is_reported(self):
        self.write("nodes/n.py", NODE.format(body=BODY).replace("import os\n", ""))
        code, _, err = self.main("--check")
        self.assertEqual(code, 1)
        self.assertIn("nodes/n.py: block greet needs `import os`", err)

    def test_sibling_block_imports_are_not_required(self):
        self.write("nodes/blocks/greet.py", BLOCK.replace("import os\n", "import os\nfrom nodes.blocks.other import x\n"))
        self.write("nodes/n.py", NODE.format(body=BODY))
        self.assertEqual(self.main("--check"), (0, "", ""))

    def test_unknown_block(self):
        self.write("nodes/n.py", NODE.format(body=BODY).replace("greet (nodes/blocks/greet.py)", "nope (nodes/blocks/nope.py)")
                   .replace("END BLOCK greet", "END BLOCK nope"))
        code, _, err = self.main("--check")
        self.assertEqual(code, 1)
        self.assertIn("no block named nope", err)

    def test_malformed_markers(self):
        cases = {
            "BEGIN BLOCK greet has no END": NODE.format(body=BODY).replace("# ---- END BLOCK greet ----\n", ""),
            "END BLOCK greet without its BEGIN": "# ---- END BLOCK greet ----\n",
            "must name nodes/blocks/greet.py": NODE.format(body=BODY).replace("(nodes/blocks/greet.py)", "(elsewhere.py)"),
            "inside block greet": NODE.format(body="# ---- BEGIN BLOCK greet (nodes/blocks/greet.py) ----\n"),
        }
        for expected, text in cases.items():
            self.write("nodes/n.py", text)
            code, _, err = self.main()
            self.assertEqual(code, 1, expected)
            self.assertIn(expected, err)
            self.assertEqual(self.read("nodes/n.py"), text)  # never half-rewritten

    def test_block_without_body_marker(self):
        self.write("nodes/blocks/greet.py", "import os\n")
        self.write("nodes/n.py", NODE.format(body=BODY))
        code, _, err = self.main("--check")
        self.assertEqual(code, 1)
        self.assertIn("needs exactly one line", err)

    def test_split_block_strips_blank_lines(self):
        header, body = sync.split_block(BLOCK, "greet")
        self.assertTrue(header.startswith('"""Block'))
        self.assertEqual(body, BODY)

    def test_the_repository_is_in_sync(self):
        self.assertEqual(sync.run(sync.DEFAULT_ROOT, check=True), [])


if __name__ == "__main__":
    unittest.main()
