"""Reading clauses, sections and decisions from a contract document."""

import os
import unittest

from conformance import clauses
from conformance.clauses import ContractNotFound, clause_prefix, parse

DOC = """\
# The demo contract

Intro text.

## Credentials (CREDS)

Prose about credentials.

### DEMO-CREDS-1 (MUST) Locate the file

First line of the text.
Second line, with `code`.

#### A sub-heading ends the clause

Not part of DEMO-CREDS-1.

### DEMO-CREDS-2 (should) Warn once

Warn text.

```
### DEMO-FAKE-1 (MUST) inside a fence
```

## Cancellation

### DEMO-STOP-1 (MAY) Stop politely

Stop text.

### DEMO-STOP-2 (RETIRED) Was a thing

## Decisions

### D1 The first decision

Why: it pins DEMO-CREDS-1 and DEMO-STOP-1.

- D2 A list-item decision about DEMO-CREDS-2.
- **D3** Bold id, no clause.

## Afterword

- D9 not a decision here
"""


class ParseTest(unittest.TestCase):
    def setUp(self):
        self.doc = parse(DOC, "demo", "demo.md")

    def test_clauses_levels_titles(self):
        self.assertEqual(list(self.doc.clauses), ["DEMO-CREDS-1", "DEMO-CREDS-2", "DEMO-STOP-1", "DEMO-STOP-2"])
        first = self.doc.clauses["DEMO-CREDS-1"]
        self.assertEqual((first.level, first.title, first.section, first.area), ("MUST", "Locate the file",
                                                                                 "Credentials (CREDS)", "CREDS"))
        self.assertEqual(first.text, "First line of the text.\nSecond line, with `code`.")
        self.assertEqual(self.doc.clauses["DEMO-CREDS-2"].level, "SHOULD")
        self.assertEqual(self.doc.clauses["DEMO-STOP-2"].level, "RETIRED")
        self.assertEqual([c.id for c in self.doc.required()], ["DEMO-CREDS-1"])

    def test_fenced_headings_are_text(self):
        self.assertNotIn("DEMO-FAKE-1", self.doc.clauses)
        self.assertIn("DEMO-FAKE-1", self.doc.clauses["DEMO-CREDS-2"].text)

    def test_sections_and_title(self):
        self.assertEqual(self.doc.title, "The demo contract")
        self.assertEqual([s for s, _ids in self.doc.sections],
                         ["Credentials (CREDS)", "Cancellation", "Decisions", "Afterword"])
        self.assertEqual(self.doc.sections[1][1], ["DEMO-STOP-1", "DEMO-STOP-2"])
        self.assertEqual(self.doc.section_of_area("stop"), "Cancellation")
        self.assertIsNone(self.doc.section_of_area("NOPE"))

    def test_decisions(self):
        self.assertEqual(list(self.doc.decisions), ["D1", "D2", "D3"])
        self.assertEqual(self.doc.decisions["D1"].title, "The first decision")
        self.assertEqual(self.doc.decisions["D1"].clauses, ["DEMO-CREDS-1", "DEMO-STOP-1"])
        self.assertEqual(self.doc.decisions["D2"].clauses, ["DEMO-CREDS-2"])
        self.assertEqual(self.doc.decisions["D3"].clauses, [])

    def test_duplicate_id_is_an_error(self):
        with self.assertRaises(ValueError):
            parse("## S\n### A-B-1 (MUST) x\n### A-B-1 (MUST) y\n")


class LoadTest(unittest.TestCase):
    def test_selftest_document_is_found(self):
        doc = clauses.load("_selftest")
        self.assertIs(doc, clauses.load("_selftest"))  # cached while unchanged
        self.assertEqual(doc.clauses["SELFTEST-STOP-1"].section, "Cancellation (STOP)")
        self.assertIn("_selftest", clauses.available())
        self.assertTrue(doc.path.endswith(os.path.join("tests", "data", "contract", "_selftest.md")))

    def test_missing_contract(self):
        with self.assertRaises(ContractNotFound):
            clauses.load("no_such_contract")

    def test_prefix(self):
        self.assertEqual(clause_prefix("step"), "STEP")
        self.assertEqual(clause_prefix("_selftest"), "SELFTEST")

    def test_real_contracts_parse(self):
        names = [n for n in clauses.available() if not n.startswith("_")]
        if not names:
            self.skipTest("no contract document yet")
        for name in names:
            doc = clauses.load(name)
            prefix = clause_prefix(name) + "-"
            for clause in doc.clauses.values():
                self.assertTrue(clause.id.startswith(prefix), clause.id)
                self.assertTrue(clause.text, "%s has no text" % clause.id)
                self.assertIn(clause.level, clauses.LEVELS + ("RETIRED",), clause.id)


if __name__ == "__main__":
    unittest.main()
