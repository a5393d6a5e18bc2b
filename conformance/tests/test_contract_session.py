"""Tests of the session contract's own documents: contract/session.md, its schemas and examples.

The session checks are still to be written; until then these tests hold what the
contract promises its readers and its future checks:

- every clause heading is well formed, IDs are numbered from 1 without a gap in each area,
  and every clause ID the text mentions (its own or the crawler's) exists;
- every Decision pins at least one clause that exists;
- the documents table names exactly the schemas shipped, and each schema has valid examples
  that validate and invalid ones that fail it exactly once, for the reason their name gives.
"""

import collections
import os
import re
import unittest

from conformance.schema import unsupported, validate
from conformance.tests.contract_text import ContractText, read, table_rows

DOC = ContractText("session")
CRAWLER = ContractText("crawler")
CLAUSE_HEADING = re.compile(r"^### (SESSION-([A-Z]+)-([0-9]+)) \((MUST|SHOULD|MAY)\) \S")
ANY_HEADING_ID = re.compile(r"^### (SESSION-[A-Z0-9-]+)")
MENTION = re.compile(r"\b((?:SESSION|CRAWLER)-[A-Z]+-[0-9]+)\b")
RANGE_MENTION = re.compile(r"\b((SESSION|CRAWLER)-[A-Z]+)-([0-9]+) to (?:(?:SESSION|CRAWLER)-[A-Z]+-)?([0-9]+)\b")
DECISION_HEADING = re.compile(r"^### (D[0-9]+) \S")
SCHEMA_CELL = re.compile(r"^`([a-z-]+)`$")


def _schema_names():
    folder = DOC.schema_dir
    return sorted(f[:-len(".schema.json")] for f in os.listdir(folder) if f.endswith(".schema.json"))


def _schema_of(filename, names):
    """The longest schema name `filename` starts with, followed by '-' (None if none)."""
    for name in sorted(names, key=len, reverse=True):
        if filename.startswith(name + "-"):
            return name
    return None


def _clause_ids(doc):
    return {match.group(1) for match in map(re.compile(r"^### ([A-Z]+-[A-Z]+-[0-9]+) \(").match, doc.lines())
            if match}


class ClausesTest(unittest.TestCase):

    def test_every_clause_heading_is_well_formed(self):
        for line in DOC.lines():
            if ANY_HEADING_ID.match(line):
                with self.subTest(heading=line):
                    self.assertRegex(line, CLAUSE_HEADING)

    def test_each_area_is_numbered_from_one_without_a_gap(self):
        numbers = collections.defaultdict(list)
        for line in DOC.lines():
            match = CLAUSE_HEADING.match(line)
            if match:
                numbers[match.group(2)].append(int(match.group(3)))
        self.assertGreater(len(numbers), 10)
        for area, found in numbers.items():
            with self.subTest(area=area):
                self.assertEqual(found, list(range(1, len(found) + 1)))

    def test_every_clause_mentioned_exists(self):
        known = _clause_ids(DOC) | _clause_ids(CRAWLER)
        text = read(DOC.path)
        for mention in sorted(set(MENTION.findall(text))):
            with self.subTest(mention=mention):
                self.assertIn(mention, known)
        for prefix, _contract, low, high in RANGE_MENTION.findall(text):
            for n in range(int(low), int(high) + 1):
                with self.subTest(mention="%s-%d" % (prefix, n)):
                    self.assertIn("%s-%d" % (prefix, n), known)

    def test_every_decision_pins_a_clause(self):
        decisions = DOC.decisions(DECISION_HEADING)
        self.assertEqual(sorted(decisions, key=lambda d: int(d[1:])),
                         ["D%d" % n for n in range(1, len(decisions) + 1)])
        known = _clause_ids(DOC)
        for decision, text in decisions.items():
            with self.subTest(decision=decision):
                self.assertTrue(set(MENTION.findall(text)) & known, "cites no clause of this contract")


AUDIT_HEADING = "## Where we differ from the upstream"
AUDIT_COLUMNS = ["document: member or aspect", "the upstream accepts (seed line)", "our node accepts",
                 "stricter because"]
# The documents and groups the audit must cover (issue 20: every document the node receives).
AUDIT_GROUPS = ["Command line and launch", "Environment variables",
                "Metadata server, exchange and legacy lease answers", "The lease", "Callback answers and refusals",
                "Claim answers and claimed probes", "Acquisition documents and the download descriptor",
                "The download and the bundle", "Service mode"]
SEED_REFERENCE = re.compile(r"`seed (000|003):[1-9][0-9]*`")
DECISION_MENTION = re.compile(r"\bD([0-9]+)\b")


class UpstreamAuditTest(unittest.TestCase):
    """The section that says where this node is stricter than its upstream, and why."""

    def setUp(self):
        self.lines = DOC.lines()
        self.text = DOC.section(AUDIT_HEADING)

    def test_the_audit_sits_just_before_the_decisions(self):
        headings = [line for line in self.lines if line.startswith("## ")]
        self.assertEqual(headings[headings.index("## Decisions") - 1], AUDIT_HEADING)

    def test_every_group_has_a_table_of_the_four_columns(self):
        groups = re.findall(r"^\*\*(.+)\*\*$", self.text, re.M)
        self.assertEqual(groups, AUDIT_GROUPS)
        headers = [line for line in self.text.splitlines() if line.startswith("| document: ")]
        self.assertEqual(len(headers), len(AUDIT_GROUPS))
        for header in headers:
            self.assertEqual(table_rows(header)[0], AUDIT_COLUMNS)

    def test_every_stricter_row_names_its_reason_and_a_decision(self):
        known = set(DOC.decisions(DECISION_HEADING))
        for row in table_rows(self.text):
            if row == AUDIT_COLUMNS:
                continue
            with self.subTest(row=row[0]):
                self.assertEqual(len(row), 4)
                stricter = row[3]
                if stricter == "-" or stricter.startswith("- ("):
                    continue
                decisions = ["D%s" % n for n in DECISION_MENTION.findall(stricter)]
                self.assertTrue(decisions, "a stricter point without its Decision: %r" % stricter)
                for decision in decisions:
                    self.assertIn(decision, known)
                self.assertTrue(SEED_REFERENCE.search(row[1]) or "not in the seed" in row[1],
                                "the upstream's column cites no seed line: %r" % row[1])

    def test_every_defined_here_paragraph_names_the_upstream_module(self):
        for number, line in enumerate(self.lines, 1):
            if line.startswith("**Defined here**") or line.startswith("**Defined here.**"):
                paragraph = " ".join(self.lines[number - 1:number + 2])
                with self.subTest(line=number):
                    self.assertIn("not in", paragraph, "a Defined here paragraph that names no upstream "
                                                       "module it stands in for")


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


class SchemasAndExamplesTest(unittest.TestCase):

    def test_the_documents_table_names_the_shipped_schemas(self):
        named = set()
        for row in table_rows(DOC.section("## Documents, JSON, URLs and codes")):
            for part in row[-1].split(","):
                match = SCHEMA_CELL.match(part.strip())
                if match:
                    named.add(match.group(1))
        self.assertEqual(sorted(named), _schema_names())

    def test_schemas_use_only_the_supported_subset(self):
        for name in _schema_names():
            with self.subTest(schema=name):
                self.assertEqual(unsupported(DOC.schema(name)), [])

    def test_valid_examples_validate_and_invalid_ones_fail_once(self):
        names = _schema_names()
        seen = collections.Counter()
        for kind in ("valid", "invalid"):
            for example in DOC.examples(kind):
                schema = _schema_of(example, names)
                with self.subTest(example=kind + "/" + example):
                    self.assertIsNotNone(schema, "names no schema")
                    errors = validate(DOC.example(kind, example), DOC.schema(schema))
                    if kind == "valid":
                        self.assertEqual(errors, [])
                    else:
                        self.assertEqual(len(errors), 1, errors)
                seen[(schema, kind)] += 1
        for name in names:
            with self.subTest(schema=name):
                self.assertGreaterEqual(seen[(name, "valid")], 1)
                self.assertGreaterEqual(seen[(name, "invalid")], 1)


if __name__ == "__main__":
    unittest.main()
