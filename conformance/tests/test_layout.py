"""One family of nodes: the same table of contents and the same [EDIT] frame in every node.

`grep -n '^# [0-9]' NODE` prints exactly the table of contents of each reference node and
derivative (STYLE item 1), and section 3 of each reads from below its KEEP line only the names
its frame lists (node.edit-surface judges the same on a user's copy).
"""

import ast
import os
import re
import unittest

from conformance import layout
from conformance import sync

# A node cut down to its banners, in the one order (STYLE item 1).
SKELETON = "\n".join([
    "# 1 Imports " + "=" * 68,
    "# 2 Configuration [EDIT] " + "=" * 55,
    "# 3 Your work [EDIT] " + "=" * 59,
    "# 3.2 The reference work: replace it whole [EDIT] " + "=" * 30,
    layout.KEEP_LINE,
    "# 4 Limits " + "=" * 69,
    "# 5 Errors " + "=" * 69,
    "# 6 Protocol " + "=" * 67,
] + ["# 6.%d %s %s" % (n, t, "=" * (80 - 4 - len("6.%d" % n) - len(t))) for n, t in enumerate(
    ("Process and output", "Documents and forms", "Configuration", "Identity", "HTTP exchanges",
     "State on disk (not used by this node)", "Child framing", "Progress", "The node's own topic"), 1)] + [
    "# 7 Lifecycle " + "=" * 66,
    "# 7.1 The run " + "=" * 66,
    "# 8 main() " + "=" * 69,
    "# 9 Shared blocks " + "=" * 62,
]) + "\n"


def node_files():
    root = sync.DEFAULT_ROOT
    paths = sync.node_paths(root) + [path for path, _ in sync.derivative_paths(root)]
    return [(os.path.relpath(path, root), path) for path in paths]


class TocTest(unittest.TestCase):
    def test_every_node_prints_exactly_its_table_of_contents(self):
        files = node_files()
        self.assertGreaterEqual(len(files), 7)  # four reference nodes, three derivatives
        for label, path in files:
            with open(path, encoding="utf-8") as handle:
                source = handle.read()
            with self.subTest(node=label):
                self.assertEqual(layout.toc_problems(source), [])

    def test_the_skeleton_passes(self):
        self.assertEqual(layout.toc_problems(SKELETON), [])

    def test_a_comment_that_looks_like_an_entry_is_refused(self):
        problems = layout.toc_problems(SKELETON.replace("# 7.1 The run", "# 7.1 The run: what it does\n# 7.1 The run"))
        self.assertEqual(len(problems), 1)
        self.assertIn("is no banner", problems[0])

    def test_order_gaps_and_topics(self):
        self.assertTrue(layout.toc_problems(SKELETON.replace("# 7.1 The run ", "# 7.2 The run ")))
        self.assertTrue(layout.toc_problems(SKELETON.replace("# 9 Shared blocks ", "# 9 Blocks ======")))
        self.assertTrue(layout.toc_problems(SKELETON.replace("6.4 Identity", "6.4 Identities")))
        self.assertTrue(layout.toc_problems(SKELETON.replace("# 6 Protocol " + "=" * 67, "# 6 Protocol ==")))
        moved = SKELETON.replace(layout.KEEP_LINE + "\n", "").replace("# 4 Limits", layout.KEEP_LINE + "\n\n# 5 x\n# 4 Limits")
        self.assertTrue(layout.toc_problems(moved))


class FrameTest(unittest.TestCase):
    def test_every_node_reads_below_keep_only_what_its_frame_lists(self):
        for label, path in node_files():
            with open(path, encoding="utf-8") as handle:
                surface = layout.edit_surface(handle.read())
            with self.subTest(node=label):
                self.assertTrue(surface.has_keep and surface.has_frame)
                self.assertEqual(surface.unlisted(), [])

    def test_a_reach_below_keep_is_seen_and_a_local_is_not(self):
        source = SKELETON.replace(layout.KEEP_LINE, "\n".join([
            "# +- The frame -", "# | Called, in order: work().", "# | Your code may use: two names.",
            "# | Uses from below KEEP: LISTED,", "# |     ALSO", "# | To refuse work: raise.", "# +---",
            "def work(SHADOWED):", "    return LISTED + ALSO + SHADOWED + UNLISTED", "", layout.KEEP_LINE]))
        source += "LISTED = ALSO = SHADOWED = UNLISTED = 1\n"
        surface = layout.edit_surface(source)
        self.assertTrue(surface.has_frame)
        self.assertEqual(surface.listed, {"LISTED", "ALSO"})
        self.assertEqual([name for _, name in surface.unlisted()], ["UNLISTED"])
        self.assertFalse(layout.edit_surface(source.replace(layout.KEEP_LINE, "# keep")).has_keep)

    def test_a_module_only_a_function_imports_is_seen_when_section_3_reads_it(self):
        source = SKELETON.replace(layout.KEEP_LINE, "\n".join([
            "def work(rows):", "    return datetime.date.today(), json.dumps(rows), csv.writer", "", layout.KEEP_LINE]))
        source += "\n".join(["import json", "try:", "    import csv", "except ImportError:", "    csv = None", "",
                             "def late_imports():", "    global datetime, csv", "    import datetime", "    import csv", ""])
        surface = layout.edit_surface(source)
        self.assertEqual(surface.late_reads(), [(surface.late["datetime"][0], "datetime", "late_imports")])
        shadowed = source.replace("def work(rows):", "def work(rows, datetime=None):")
        self.assertEqual(layout.edit_surface(shadowed).late_reads(), [])
        imported_above = source.replace("import json\n", "import json\nimport datetime\n")
        self.assertEqual(layout.edit_surface(imported_above).late_reads(), [])

    def test_no_node_reads_a_late_import_from_section_3(self):
        for label, path in node_files():
            with open(path, encoding="utf-8") as handle:
                source = handle.read()
            with self.subTest(node=label):
                self.assertEqual(layout.edit_surface(source).late_reads(), [])


def main_text(source):
    """main()'s source with clause IDs blanked: what every node shares word for word."""
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.FunctionDef) and statement.name == "main":
            text = "\n".join(source.splitlines()[statement.lineno - 1:statement.end_lineno])
            return re.sub(r"\b[A-Z]+-[A-Z]+-[0-9]+\b", "ID", text)
    return None


class MainTest(unittest.TestCase):
    def test_every_node_has_the_same_main(self):
        texts = {}
        for label, path in node_files():
            with open(path, encoding="utf-8") as handle:
                texts[label] = main_text(handle.read())
        first = texts["nodes/hello_node.py"]
        self.assertIsNotNone(first)
        for label, text in texts.items():
            with self.subTest(node=label):
                self.assertEqual(text, first)

    def test_a_changed_main_is_seen(self):
        source = "def main(argv=None):\n    return 0  # STEP-EXIT-1: the code\n"
        self.assertEqual(main_text(source), main_text(source.replace("STEP-EXIT-1", "SCAN-ARGV-2")))
        self.assertNotEqual(main_text(source), main_text(source.replace("return 0", "return 1")))


if __name__ == "__main__":
    unittest.main()
