"""[EDIT] knobs are safe to turn (conformance/knobs.py).

Every constant above a reference node's KEEP line has a row in its contract's
table (conformance/tests/knobs_<contract>.py), and a copy of the node with
every knob turned passes the platform checks that touch them.
"""

import os
import shutil
import tempfile
import unittest

from conformance import checks, knobs
from conformance.clauses import REPO_ROOT

TOY = os.path.join(REPO_ROOT, "conformance", "tests", "data", "toy_node.py")

SAMPLE = '''"""A node.

    # ---- Below this line: contract machinery [KEEP] ----   (the docstring's mention is not the line)
"""
import re

PROGRAM = "x"  # the name
LABEL = "caf\\u00e9"; MARK = "\u2026"  # two on one line, a non-ASCII character before the second
_PRIVATE_RE = re.compile(
    r"[a-z]+")
lowercase = 1
MULTI = (
    "a",
    "b",
)

# ---- Below this line: contract machinery [KEEP] ----

BELOW = 2
'''


def _contracts():
    """Every contract with a reference node (only CONFORMANCE_CONTRACT's, when make test CONTRACT=X set it)."""
    only = os.environ.get("CONFORMANCE_CONTRACT")
    return [name for name in checks.contracts() if checks.reference_node(name) and only in (None, "", name)]


def _node_text(contract):
    with open(os.path.join(REPO_ROOT, checks.reference_node(contract)), encoding="utf-8") as handle:
        return handle.read()


class EditConstantsTest(unittest.TestCase):
    def test_names_above_the_code_keep_line_only(self):
        self.assertEqual(sorted(knobs.edit_constants(SAMPLE)), ["LABEL", "MARK", "MULTI", "PROGRAM", "_PRIVATE_RE"])

    def test_turn_replaces_the_value_expression_only(self):
        turned = knobs.turn(SAMPLE, {"MARK": '"..."', "MULTI": '("c",)', "PROGRAM": '"y"'})
        self.assertIn('PROGRAM = "y"  # the name\n', turned)
        self.assertIn('LABEL = "caf\\u00e9"; MARK = "..."  # two on one line', turned)
        self.assertIn('MULTI = ("c",)\n\n# ---- Below', turned)
        self.assertIn("BELOW = 2", turned)

    def test_unknown_names_and_broken_source_are_refused(self):
        with self.assertRaises(ValueError):
            knobs.turn(SAMPLE, {"BELOW": "3"})
        with self.assertRaises(SyntaxError):
            knobs.turn(SAMPLE, {"PROGRAM": '"unclosed'})
        with self.assertRaises(ValueError):
            knobs.edit_constants("X = 1\n")


class TableTest(unittest.TestCase):
    """Each reference node's table lists every [EDIT] constant, each with a value of its own."""

    def test_every_reference_node_has_a_table(self):
        for contract in _contracts():
            with self.subTest(contract=contract):
                found, _ = knobs.table(contract)
                self.assertTrue(found, "conformance/tests/knobs_%s.py lists no knob" % contract)

    def test_every_constant_above_keep_has_one_row(self):
        for contract in _contracts():
            with self.subTest(contract=contract):
                self.assertEqual(knobs.problems(contract, _node_text(contract)), [])

    def test_the_turned_copy_compiles_and_differs(self):
        for contract in _contracts():
            with self.subTest(contract=contract):
                table, _ = knobs.table(contract)
                text = _node_text(contract)
                turned = knobs.turn(text, dict((k.name, k.value) for k in table))
                self.assertNotEqual(turned, text)

    def test_a_new_constant_without_a_row_is_reported(self):
        contract = _contracts()[0]
        text = _node_text(contract).replace(knobs.KEEP_LINE, "NEW_KNOB = 1\n\n" + knobs.KEEP_LINE, 1)
        self.assertIn("NEW_KNOB is an [EDIT] constant with no row: add a Knob (or NOT_KNOBS with a reason)",
                      knobs.problems(contract, text))


@unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves node runs to make test")
class TurnedCopyTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="conformance-knobs-test-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def test_every_reference_node_works_with_its_knobs_turned(self):
        import concurrent.futures

        def judged(contract):
            path = knobs.turned_copy(contract, os.path.join(REPO_ROOT, checks.reference_node(contract)), self.dir)
            return knobs.judge(contract, path, knobs.table(contract)[0], jobs=2)
        # The four contracts at once: their checks mostly wait for nodes (46 s one after another, on 2 cores).
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            outcomes = dict(zip(_contracts(), pool.map(judged, _contracts())))
        for contract, (status, failed, out) in outcomes.items():
            with self.subTest(contract=contract):
                self.assertEqual(status, 0, "turned copy of %s fails %s:\n%s" % (contract, failed, out[-3000:]))

    def test_a_machinery_that_assumes_a_reference_value_fails(self):
        # The toy node, with a knob whose value the machinery below KEEP reads:
        # turned, the greeting names nobody and greet.hello fails.
        with open(TOY, encoding="utf-8") as handle:
            text = handle.read()
        text = text.replace("POLL_S = 0.01", 'NAME_VARIABLE = "TOY_NAME"\n\n%s\n\nPOLL_S = 0.01' % knobs.KEEP_LINE, 1)
        text = text.replace('os.environ.get("TOY_NAME", "world")', 'os.environ.get(NAME_VARIABLE, "nobody")', 1)
        path = os.path.join(self.dir, "toy.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        knob = knobs.Knob("NAME_VARIABLE", '"OTHER_NAME"', checks=["greet.hello"])
        self.assertEqual(knobs.judge("_selftest", path, [knob])[0], 0)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(knobs.turn(text, {"NAME_VARIABLE": knob.value}))
        status, failed, _out = knobs.judge("_selftest", path, [knob])
        self.assertEqual((status, failed), (1, ["greet.hello"]))


if __name__ == "__main__":
    unittest.main()
