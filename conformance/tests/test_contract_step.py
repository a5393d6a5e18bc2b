"""Tests of the step contract's own content: what only contract/step.md has.

The rules every contract document keeps (clause headings and IDs, Decisions, the audit,
schemas and examples) are conformance/tests/test_contracts.py's. Here:

- the table "The upstream hello node through this suite" names checks that exist and
  Decisions that exist;
- the counter-example examples/naive_step_node.py stays a runnable program that names its
  flaws.
"""

import os
import re
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.tests.contract_text import ContractText, read  # noqa: E402

DOC = ContractText("step")
NAIVE_NODE = os.path.join(ROOT, "examples", "naive_step_node.py")
RUN_HEADING = "## The upstream hello node through this suite"
DECISION_HEADING_RE = re.compile(r"^### (D\d+) \S.*")


def _table_rows(text):
    """[[cell, ...]] of every markdown table row in text, header rows included."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip()[1:-1])])
    return rows


class UpstreamRunTest(unittest.TestCase):
    """The upstream's own run through the suite, as the contract reports it."""

    def test_the_upstream_run_table_names_real_checks_and_decisions(self):
        from conformance import checks, static
        known = {c.id for c in checks.load("step")} | {c.id for c in static.checks_for("step")}
        decisions = DOC.decisions(DECISION_HEADING_RE)
        rows = [row for row in _table_rows(DOC.section(RUN_HEADING)) if row[0] != "check"]
        self.assertGreaterEqual(len(rows), 25)
        for row in rows:
            with self.subTest(check=row[0]):
                self.assertIn(row[0].split()[0].strip("`"), known)
                cited = re.findall(r"\bD\d+\b", row[2])
                self.assertTrue(cited and all(d in decisions for d in cited), row)


class NaiveNodeTest(unittest.TestCase):
    """The counter-example must stay a runnable program that names its flaws."""

    def test_naive_node_compiles_and_marks_its_flaws(self):
        source = read(NAIVE_NODE)
        compile(source, NAIVE_NODE, "exec")
        self.assertGreaterEqual(source.count("# NAIVE:"), 8)


if __name__ == "__main__":
    unittest.main()
