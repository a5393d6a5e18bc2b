"""Tests of the session contract's own content: what only contract/session.md has.

The rules every contract document keeps (clause headings and IDs, Decisions, the audit's
columns and reasons, schemas and examples) are conformance/tests/test_contracts.py's. Here:

- the audit has a table for every group of documents the node receives;
- D38's table of deployment constants, the harness's settings and the reference node's
  section 2 name the same values.
"""

import os
import re
import unittest

from conformance.tests.contract_text import ContractText, table_rows

DOC = ContractText("session")
DECISION_HEADING = re.compile(r"^### (D[0-9]+) \S")

AUDIT_HEADING = "## Where we differ from the upstream"
# The documents and groups the audit must cover (issue 20: every document the node receives).
AUDIT_GROUPS = ["Command line and launch", "Environment variables",
                "Metadata server, exchange and legacy lease answers", "The lease", "Callback answers and refusals",
                "Claim answers and claimed probes", "Acquisition documents and the download descriptor",
                "The download and the bundle", "Service mode"]


class UpstreamAuditTest(unittest.TestCase):
    """The section that says where this node is stricter than its upstream: one table a group."""

    def test_every_group_has_a_table(self):
        text = DOC.section(AUDIT_HEADING)
        groups = re.findall(r"^\*\*(.+)\*\*$", text, re.M)
        self.assertEqual(groups, AUDIT_GROUPS)
        headers = [line for line in text.splitlines() if line.startswith("| document: ")]
        self.assertEqual(len(headers), len(AUDIT_GROUPS))


class DeploymentConstantsTest(unittest.TestCase):
    """D38's table, the harness's settings and the reference node's section 2 name the same values."""

    def test_the_table_the_settings_and_the_node_agree(self):
        from conformance.planes.session import deploy
        decision = DOC.decisions(DECISION_HEADING)["D38"]
        table = "\n".join(line.strip() for line in decision.splitlines())  # the table is indented under its item
        rows = dict((row[0].strip("`"), row[2].strip("`")) for row in table_rows(table) if row[0].startswith("`"))
        self.assertEqual(sorted(rows), sorted(setting.name for setting in deploy.SETTINGS))
        with open(os.path.join(os.path.dirname(DOC.path), "..", "nodes", "session_worker.py"),
                  encoding="utf-8") as handle:
            node = handle.read()
        section_2 = node[node.index("# 2 Configuration [EDIT]"):node.index("# 3 Your work [EDIT]")]
        for setting in deploy.SETTINGS:
            with self.subTest(name=setting.name):
                self.assertEqual(rows[setting.name], setting.show(setting.default))
                line = section_2.split("\n%s = " % setting.name, 1)[1].split("\n", 1)[0].split("  #", 1)[0]
                self.assertEqual(eval(line, {}), setting.default)


if __name__ == "__main__":
    unittest.main()
