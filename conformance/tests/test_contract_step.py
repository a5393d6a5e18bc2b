"""Tests of the step contract's own documents: contract/step.md, its schemas and examples.

The harness quotes clause text by ID, checks cite clause IDs, and mutants name checks; all
of that rests on the contract document being well-formed. These tests hold it so:

- every valid example validates against its schema and every invalid one fails it (the
  schema is chosen by the file name's prefix: ``marker-bool-exit-code.json`` → marker);
- every clause heading has the exact form ``### STEP-AREA-n (LEVEL) Title`` (LEVEL may
  be RETIRED), IDs are unique, and every clause of the design list is present at its level;
- every decision names at least one ``Pinned by:`` clause that exists, and every ``(Dn)``
  cited in the text is a decision that exists;
- the schemas use only the keyword subset ``conformance.schema`` implements.
"""

import json
import os
import re
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.schema import validate  # noqa: E402
from conformance.tests.contract_text import ContractText, load_json, read  # noqa: E402

CONTRACT_MD = os.path.join(ROOT, "contract", "step.md")
EXAMPLE_DIR = os.path.join(ROOT, "contract", "examples", "step")
NAIVE_NODE = os.path.join(ROOT, "examples", "naive_step_node.py")

SCHEMAS = ("envelope", "manifest", "result", "marker", "progress")
MIN_VALID_EXAMPLES = 2
MIN_INVALID_EXAMPLES = 3

CLAUSE_HEADING_RE = re.compile(r"^### STEP-[A-Z]+-\d+ \((MUST|SHOULD|MAY|RETIRED)\) .+")
CLAUSE_PARTS_RE = re.compile(r"^### (STEP-[A-Z]+-\d+) \((MUST|SHOULD|MAY|RETIRED)\) ")
DECISION_HEADING_RE = re.compile(r"^### (D\d+) \S.*")
CLAUSE_ID_RE = re.compile(r"STEP-[A-Z]+-\d+")

# The clause list the contract was designed with: every ID at its level. A clause is
# retired, never removed from this list silently; one added later is appended.
REQUIRED_CLAUSES = {
    "STEP-CREDS-1": "MUST", "STEP-CREDS-2": "SHOULD", "STEP-CREDS-3": "MUST",
    "STEP-CREDS-4": "MUST", "STEP-CREDS-5": "MUST", "STEP-CREDS-6": "MUST",
    "STEP-CREDS-7": "MUST",
    "STEP-MANIFEST-1": "MUST", "STEP-MANIFEST-2": "MUST", "STEP-MANIFEST-3": "MUST",
    "STEP-MANIFEST-4": "MUST",
    "STEP-INPUT-1": "MUST", "STEP-INPUT-2": "MUST", "STEP-INPUT-3": "MUST",
    "STEP-INPUT-4": "MUST", "STEP-INPUT-5": "RETIRED", "STEP-INPUT-6": "MUST",
    "STEP-OUTPUT-1": "MUST", "STEP-OUTPUT-2": "MUST", "STEP-OUTPUT-3": "MUST",
    "STEP-OUTPUT-4": "MUST", "STEP-OUTPUT-5": "MUST", "STEP-OUTPUT-6": "MUST",
    "STEP-OUTPUT-7": "MUST", "STEP-OUTPUT-8": "MUST",
    "STEP-RESULT-1": "MUST", "STEP-RESULT-2": "MUST", "STEP-RESULT-3": "MUST",
    "STEP-RESULT-4": "MUST", "STEP-RESULT-5": "MUST",
    "STEP-MARKER-1": "MUST", "STEP-MARKER-2": "MUST", "STEP-MARKER-3": "MUST",
    "STEP-MARKER-4": "MUST", "STEP-MARKER-5": "MUST", "STEP-MARKER-6": "MUST",
    "STEP-MARKER-7": "MUST",
    "STEP-PROGRESS-1": "MUST", "STEP-PROGRESS-2": "SHOULD", "STEP-PROGRESS-3": "MUST",
    "STEP-EXIT-1": "MUST", "STEP-EXIT-2": "MUST",
    "STEP-STOP-1": "MUST", "STEP-STOP-2": "MUST", "STEP-STOP-3": "MUST",
    "STEP-STOP-4": "MUST", "STEP-STOP-5": "MUST", "STEP-STOP-6": "MUST",
    "STEP-STREAM-1": "MUST", "STEP-STREAM-2": "SHOULD", "STEP-STREAM-3": "MUST",
    "STEP-STREAM-4": "SHOULD",
    "STEP-HTTP-1": "MUST", "STEP-HTTP-2": "MUST", "STEP-HTTP-3": "MUST",
    "STEP-HTTP-4": "SHOULD", "STEP-HTTP-5": "MUST",
    "STEP-REDACT-1": "MUST", "STEP-REDACT-2": "MUST",
    "STEP-NODE-1": "MUST", "STEP-NODE-2": "SHOULD", "STEP-NODE-3": "MUST",
    # Version 2: the reference node's example work, in its own [example work] section.
    "STEP-WORK-1": "MUST", "STEP-WORK-2": "MUST", "STEP-WORK-3": "MUST", "STEP-WORK-4": "MUST",
    "STEP-WORK-5": "MUST", "STEP-WORK-6": "SHOULD", "STEP-WORK-7": "SHOULD",
    # Proxies (issue 9): HTTPS_PROXY / HTTP_PROXY / NO_PROXY, the CONNECT tunnel.
    "STEP-PROXY-1": "MUST", "STEP-PROXY-2": "MUST", "STEP-PROXY-3": "MUST", "STEP-PROXY-4": "MUST",
    "STEP-PROXY-5": "MUST",
    # Peers (issue 20): documents, answers and the environment as the upstream read them.
    "STEP-PEER-1": "MUST", "STEP-PEER-2": "MUST", "STEP-PEER-3": "MUST",
}

# The safety reasons a stricter-than-the-upstream row may give (ARCHITECTURE.md, "Accept what
# the upstream accepts"), as words its last cell must hold.
SAFETY_WORDS = ("secret", "path could escape", "bound", "digest", "binding", "fence")
SEED_REF_RE = re.compile(r"`seed 001:(\d+)`")
# The seeds sit beside the project (../shared/seeds), or beside its worktrees' parent.
SEED_FILES = [os.path.join(parent, "shared", "seeds", "001_8425f7612930645f.txt")
              for parent in (os.path.dirname(ROOT), os.path.dirname(os.path.dirname(ROOT)))]
AUDIT_HEADING = "## Where we differ from the upstream"
RUN_HEADING = "## The upstream hello node through this suite"
AUDIT_COLUMNS = ["document: member or aspect", "the upstream accepts (seed line)", "our node accepts",
                 "stricter because"]

# Keywords conformance.schema implements, plus annotations it ignores.
SCHEMA_KEYWORDS = {
    "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
    "oneOf", "anyOf", "$ref", "definitions", "propertyNames",
    "$schema", "title", "description",
}


DOC = ContractText("step")
_read, _load_json = read, load_json
_contract_lines = DOC.lines
_schema, _examples = DOC.schema, DOC.examples


def _clauses():
    """(id, level) of every clause heading, in document order."""
    return DOC.clauses(CLAUSE_PARTS_RE)


def _decisions():
    """{decision id: body text} for the '## Decisions' section."""
    return DOC.decisions(DECISION_HEADING_RE)


def _schema_name_for(filename):
    return filename.split("-", 1)[0]


class ExamplesTest(unittest.TestCase):

    def test_every_example_names_a_known_schema(self):
        for kind in ("valid", "invalid"):
            for name in _examples(kind):
                with self.subTest(example=kind + "/" + name):
                    self.assertIn(_schema_name_for(name), SCHEMAS)

    def test_valid_examples_validate(self):
        for name in _examples("valid"):
            with self.subTest(example=name):
                instance = _load_json(os.path.join(EXAMPLE_DIR, "valid", name))
                errors = validate(instance, _schema(_schema_name_for(name)))
                self.assertEqual(errors, [], "valid/%s should validate" % name)

    def test_invalid_examples_fail(self):
        for name in _examples("invalid"):
            with self.subTest(example=name):
                instance = _load_json(os.path.join(EXAMPLE_DIR, "invalid", name))
                errors = validate(instance, _schema(_schema_name_for(name)))
                self.assertTrue(errors, "invalid/%s should fail its schema" % name)

    def test_each_schema_has_enough_examples(self):
        for schema in SCHEMAS:
            with self.subTest(schema=schema):
                valid = [n for n in _examples("valid") if _schema_name_for(n) == schema]
                invalid = [n for n in _examples("invalid") if _schema_name_for(n) == schema]
                self.assertGreaterEqual(len(valid), MIN_VALID_EXAMPLES)
                self.assertGreaterEqual(len(invalid), MIN_INVALID_EXAMPLES)


class SchemasTest(unittest.TestCase):

    def _walk(self, node, where):
        """Yield (where, keyword) for every keyword of every subschema."""
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            yield where, key
            if key in ("properties", "definitions"):
                for name, sub in value.items():
                    yield from self._walk(sub, "%s/%s/%s" % (where, key, name))
            elif key in ("items", "additionalProperties") and isinstance(value, dict):
                yield from self._walk(value, where + "/" + key)
            elif key in ("oneOf", "anyOf"):
                for i, sub in enumerate(value):
                    yield from self._walk(sub, "%s/%s/%d" % (where, key, i))

    def test_schemas_use_only_the_supported_subset(self):
        for schema in SCHEMAS:
            for where, keyword in self._walk(_schema(schema), "#"):
                with self.subTest(schema=schema, at=where):
                    self.assertIn(keyword, SCHEMA_KEYWORDS)

    def test_refs_resolve(self):
        for schema in SCHEMAS:
            doc = _schema(schema)
            for ref in re.findall(r'"\$ref": "([^"]+)"', json.dumps(doc)):
                with self.subTest(schema=schema, ref=ref):
                    self.assertTrue(ref.startswith("#/definitions/"))
                    self.assertIn(ref.split("/", 2)[2], doc.get("definitions", {}))


class ClausesTest(unittest.TestCase):

    def test_clause_headings_have_the_exact_form(self):
        for line in _contract_lines():
            if line.startswith("### STEP") or re.match(r"^#+\s*STEP-", line):
                with self.subTest(heading=line):
                    self.assertRegex(line, CLAUSE_HEADING_RE)

    def test_every_level_three_heading_is_a_clause_or_a_decision(self):
        for line in _contract_lines():
            if line.startswith("### "):
                with self.subTest(heading=line):
                    self.assertTrue(CLAUSE_HEADING_RE.match(line)
                                    or DECISION_HEADING_RE.match(line), line)

    def test_clause_ids_are_unique(self):
        ids = [cid for cid, _ in _clauses()]
        duplicates = sorted({cid for cid in ids if ids.count(cid) > 1})
        self.assertEqual(duplicates, [])

    def test_every_designed_clause_is_present_at_its_level(self):
        present = dict(_clauses())
        for cid, level in REQUIRED_CLAUSES.items():
            with self.subTest(clause=cid):
                self.assertIn(cid, present)
                self.assertEqual(present[cid], level)

    def test_clause_ids_cited_in_the_text_exist(self):
        present = {cid for cid, _ in _clauses()}
        # Ranges like "STEP-INPUT-*" and "STEP-MANIFEST-1 to -4" are prose, not IDs.
        for cid in set(CLAUSE_ID_RE.findall(_read(CONTRACT_MD))):
            with self.subTest(cited=cid):
                self.assertIn(cid, present)


class DecisionsTest(unittest.TestCase):

    def test_there_are_decisions(self):
        self.assertTrue(_decisions())

    def test_each_decision_is_pinned_by_existing_clauses(self):
        present = {cid for cid, _ in _clauses()}
        for did, body in _decisions().items():
            with self.subTest(decision=did):
                pinned = [line for line in body.splitlines() if "Pinned by:" in line]
                self.assertEqual(len(pinned), 1, "%s needs one 'Pinned by:' line" % did)
                cited = CLAUSE_ID_RE.findall(pinned[0])
                self.assertTrue(cited, "%s pins no clause" % did)
                for cid in cited:
                    self.assertTrue(cid in present, "%s pins unknown %s" % (did, cid))

    def test_decisions_cited_in_the_text_exist(self):
        decisions = _decisions()
        text = _read(CONTRACT_MD).split("\n## Decisions\n", 1)[0]
        # A citation looks like "(D6)" or "(D11, D20)"; "U+D800" is not one.
        for did in set(re.findall(r"(?<=[(, ])D\d+(?=[),])", text)):
            with self.subTest(cited=did):
                self.assertTrue(did in decisions, "%s is cited but not decided" % did)


def _section(heading):
    """The text of the '## ' section that begins with heading, up to the next one."""
    text = _read(CONTRACT_MD)
    start = text.index("\n" + heading + "\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def _table_rows(text):
    """[[cell, ...]] of every markdown table row in text, header rows included."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip()[1:-1])])
    return rows


class UpstreamAuditTest(unittest.TestCase):
    """The audit of what the upstream accepted, and the upstream's own run through the suite."""

    def test_the_audit_comes_just_before_the_decisions(self):
        headings = [line for line in _contract_lines() if line.startswith("## ")]
        self.assertIn(AUDIT_HEADING, headings)
        self.assertEqual(headings[headings.index(AUDIT_HEADING) + 1], "## Decisions")

    def test_every_audit_row_is_equal_or_names_its_reason_and_decision(self):
        decisions = _decisions()
        rows = _table_rows(_section(AUDIT_HEADING))
        self.assertGreater(len(rows), 40)
        for row in rows:
            with self.subTest(row=row[0]):
                self.assertEqual(len(row), 4, row)
                if row == AUDIT_COLUMNS:
                    continue
                last = row[3]
                if last == "-" or last.startswith("- ("):
                    continue
                cited = re.findall(r"\bD\d+\b", last)
                self.assertTrue(cited, "a stricter row names its Decision: %r" % last)
                self.assertTrue(all(d in decisions for d in cited), cited)
                if not last.startswith("as "):  # "as `manifest_get` (D45)" repeats an earlier row's reason
                    self.assertTrue(any(word in last for word in SAFETY_WORDS),
                                    "a stricter row names a safety reason: %r" % last)

    def test_every_decision_a_stricter_row_cites_says_so(self):
        decisions = _decisions()
        for row in _table_rows(_section(AUDIT_HEADING)):
            if len(row) == 4 and row != AUDIT_COLUMNS and row[3] != "-" and not row[3].startswith("- ("):
                for did in re.findall(r"\bD\d+\b", row[3]):
                    with self.subTest(decision=did):
                        self.assertIn("stricter than the upstream", " ".join(decisions[did].lower().split()),
                                      "%s records a stricter point and must say so" % did)

    def test_seed_references_are_lines_of_the_seed(self):
        refs = [int(n) for n in SEED_REF_RE.findall(_read(CONTRACT_MD))]
        self.assertTrue(refs)
        found = [path for path in SEED_FILES if os.path.exists(path)]
        if not found:
            self.skipTest("the seeds are not beside this checkout")
        with open(found[0], encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        for number in refs:
            with self.subTest(line=number):
                self.assertTrue(1 <= number <= len(lines) and lines[number - 1].strip(), number)

    def test_every_defined_here_names_what_it_stands_in_for(self):
        for line in _contract_lines():
            if line.startswith("**Defined here"):
                paragraph = _read(CONTRACT_MD).split(line, 1)[1].split("**", 1)[0]
                lead = " ".join((line + paragraph).split())
                with self.subTest(paragraph=line[:60]):
                    self.assertTrue(any(words in lead for words in ("not in the seed", "stands in for",
                                                                     "the seed's own", "the seed only calls")),
                                    lead[:200])

    def test_the_upstream_run_table_names_real_checks_and_decisions(self):
        from conformance import checks, static
        known = {c.id for c in checks.load("step")} | {c.id for c in static.checks_for("step")}
        decisions = _decisions()
        rows = [row for row in _table_rows(_section(RUN_HEADING)) if row[0] != "check"]
        self.assertGreaterEqual(len(rows), 25)
        for row in rows:
            with self.subTest(check=row[0]):
                self.assertIn(row[0].split()[0].strip("`"), known)
                cited = re.findall(r"\bD\d+\b", row[2])
                self.assertTrue(cited and all(d in decisions for d in cited), row)


class NaiveNodeTest(unittest.TestCase):
    """The counter-example must stay a runnable program that names its flaws."""

    def test_naive_node_compiles_and_marks_its_flaws(self):
        source = _read(NAIVE_NODE)
        compile(source, NAIVE_NODE, "exec")
        self.assertGreaterEqual(source.count("# NAIVE:"), 8)


if __name__ == "__main__":
    unittest.main()
