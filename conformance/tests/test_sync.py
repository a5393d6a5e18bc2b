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

OTHER_BLOCK = '"""Block `other`."""\n# ---- block body ----\ndef x():\n    return 1\n'
OTHER_REGION = ('# ---- BEGIN BLOCK other (nodes/blocks/other.py) ----\ndef x():\n    return 1\n'
                '# ---- END BLOCK other ----\n')


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

    def test_an_import_bound_global_by_a_function_counts_and_a_local_one_does_not(self):
        deferred = NODE.format(body=BODY).replace(
            "import os\n", "def worker_imports():\n    global os\n    import os\n")
        self.write("nodes/n.py", deferred)
        self.assertEqual(self.main("--check"), (0, "", ""))
        self.write("nodes/n.py", deferred.replace("    global os\n", ""))
        code, _, err = self.main("--check")
        self.assertEqual(code, 1)
        self.assertIn("nodes/n.py: block greet needs `import os`", err)

    def test_sibling_block_imports_are_not_required(self):
        self.write("nodes/blocks/greet.py", BLOCK.replace("import os\n", "import os\nfrom nodes.blocks.other import x\n"))
        self.write("nodes/blocks/other.py", OTHER_BLOCK)
        self.write("nodes/n.py", NODE.format(body=BODY) + OTHER_REGION)
        self.assertEqual(self.main("--check"), (0, "", ""))

    def test_a_block_needs_the_blocks_it_builds_on(self):
        self.write("nodes/blocks/greet.py", BLOCK.replace("import os\n", "import os\nfrom nodes.blocks.other import x\n"))
        self.write("nodes/blocks/other.py", OTHER_BLOCK)
        self.write("nodes/n.py", NODE.format(body=BODY))
        code, _, err = self.main("--check")
        self.assertEqual(code, 1)
        self.assertIn("nodes/n.py: block greet builds on block other, which the node does not embed", err)

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


REFERENCE = textwrap.dedent('''\
    """ref.py: the reference."""

    # 1 Imports ====
    import os

    # 2 Configuration [EDIT] ====
    NAME = "ref"

    # 3 Your work [EDIT] ====
    def work():
        return NAME

    # ---- Below this line: contract machinery [KEEP] ----
    def machinery():
        return work() + os.sep
''')

DERIVATIVE = textwrap.dedent('''\
    """mine.py: a copy.

    Derived from nodes/ref.py, edited in its [EDIT] sections.
    """

    # 1 Imports ====
    {imports}
    # 2 Configuration [EDIT] ====
    NAME = "mine"

    # 3 Your work [EDIT] ====
    def work():
        return NAME.upper()

    {keep}''')


class DerivativeSyncTest(unittest.TestCase):
    """examples/*.py that say `Derived from nodes/X.py` get X's section 1 and KEEP part."""

    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root)
        for directory in ("nodes/blocks", "examples"):
            os.makedirs(os.path.join(self.root, directory))
        SyncTest.write(self, "nodes/ref.py", REFERENCE)

    read = SyncTest.read
    main = SyncTest.main

    def derivative(self, imports="import os\n", keep=None):
        if keep is None:
            keep = REFERENCE[REFERENCE.index("# ---- Below this line"):]
        return DERIVATIVE.format(imports=imports, keep=keep)

    def test_a_faithful_derivative_passes(self):
        SyncTest.write(self, "examples/mine.py", self.derivative())
        self.assertEqual(self.main("--check"), (0, "", ""))

    def test_an_edited_keep_part_is_reported_then_rewritten(self):
        drifted = self.derivative(keep="# ---- Below this line: contract machinery [KEEP] ----\n"
                                       "def machinery():\n    return 'patched'\n")
        SyncTest.write(self, "examples/mine.py", drifted)
        code, _out, err = self.main("--check")
        self.assertEqual(code, 1)
        self.assertIn("examples/mine.py: section 1 or the KEEP part differs from nodes/ref.py", err)
        self.assertEqual(self.main()[0], 0)
        fixed = self.read("examples/mine.py")
        self.assertEqual(fixed, self.derivative())
        self.assertIn('return NAME.upper()', fixed)   # its own sections are untouched

    def test_section_one_is_the_reference_s(self):
        SyncTest.write(self, "examples/mine.py", self.derivative(imports="import os\nimport json\n"))
        self.assertEqual(self.main("--check")[0], 1)
        self.main()
        self.assertEqual(self.read("examples/mine.py"), self.derivative())

    def test_a_file_without_the_line_is_not_a_derivative(self):
        SyncTest.write(self, "examples/other.py", "print('not derived')\n")
        self.assertEqual(self.main("--check"), (0, "", ""))

    def test_a_derivative_without_the_keep_line_is_a_problem(self):
        SyncTest.write(self, "examples/mine.py", self.derivative().replace("# ---- Below this line", "# Below"))
        code, _out, err = self.main("--check")
        self.assertEqual(code, 1)
        self.assertIn("needs exactly one line starting", err)
