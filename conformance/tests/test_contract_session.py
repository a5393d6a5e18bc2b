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
