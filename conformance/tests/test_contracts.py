"""The rules every contract document keeps, each tested over every contract.

A contract is contract/<name>.md with its schemas (contract/schemas/<name>/) and examples
(contract/examples/<name>/); CONTRACTS are the registered contracts
(``conformance.checks.contracts()``) that have a document. The harness quotes clause text by
ID, checks cite clause IDs, mutants name checks and the node's documents are judged against
the schemas: all of that rests on these rules.

- Clauses: every clause heading has the form the document declares in "How to read this
  document" (``### <PREFIX>-<AREA>-<n> (LEVEL) Title``, LEVEL MUST, SHOULD, MAY or RETIRED);
  no other level-3 heading sits among clauses; IDs are unique; each area is numbered from 1
  without a gap (a retired clause keeps its number); every clause stays at its level in
  data/contract_clauses.txt; every clause ID the text cites exists, in this contract or
  another (single IDs, ``AREA-1..3`` and ``X to Y`` ranges, ``AREA-*``, short ``AREA-n``).
- Decisions: numbered D1, D2, ... in order; each pins at least one clause of its contract
  that exists (with one "Pinned by" wherever the document pins that way); every Decision
  the text cites exists.
- The audit "Where we differ from the upstream" comes just before the Decisions; each of its
  tables has the four columns; each stricter row names a safety reason and a Decision that
  says "stricter than the upstream"; each seed reference is a line of its seed file; each
  **Defined here** says what of the upstream it stands in for.
- Schemas: the subset conformance/schema.py implements, in a declared dialect, with a title
  and what they cannot express; every $ref resolves and every definition is used; copies of
  another schema equal it. Examples: each names its schema, valid ones validate, invalid
  ones fail (exactly once where the document says so), at least 2 valid and 3 invalid per
  schema; the document names exactly the schemas shipped.

Each rule is a function of a Document returning its problems ([] when it holds), so
SyntheticDocumentTest can show every rule failing on a small document that breaks it. What
legitimately differs between contracts is read from the document itself, never from its
name. A contract's own tables (codes, limits, phases, deployment constants) are tested in
test_contract_<name>.py.

Run: python3 -m unittest conformance.tests.test_contracts -v
"""

import collections
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance import checks  # noqa: E402
from conformance.schema import SchemaError, unsupported, validate  # noqa: E402
from conformance.tests.contract_text import ContractText, read, subschemas  # noqa: E402

CONTRACTS = [name for name in checks.contracts() if os.path.exists(ContractText(name).path)]
CLAUSE_LIST = os.path.join(ROOT, "conformance", "tests", "data", "contract_clauses.txt")
# The seeds sit beside the project (../shared/seeds), or beside its worktrees' parent; CI
# clones have none.
SEED_DIRS = [os.path.join(parent, "shared", "seeds")
             for parent in (os.path.dirname(ROOT), os.path.dirname(os.path.dirname(ROOT)))]

DECLARED_FORM = re.compile(r"A clause is a heading `### ([A-Z]+)-<AREA>-<n> \(LEVEL\) Title`")
LEVELS = ("MUST", "SHOULD", "MAY", "RETIRED")
DECISION_HEADING = re.compile(r"^### (D([0-9]+)) \S")
AUDIT_HEADING = "## Where we differ from the upstream"
SCHEMAS_HEADING = "## Schemas and examples"
AUDIT_COLUMNS = ["document: member or aspect", "the upstream accepts (seed line)", "our node accepts",
                 "stricter because"]
# The reasons a node may refuse more than its upstream (ARCHITECTURE.md, "Accept what the
# upstream accepts"): a secret could leak, a path could escape, a bound, a digest, a binding
# or a fence would not hold.
SAFETY_REASONS = ("a secret could leak", "a path could escape", "a bound", "a digest", "a binding", "a fence")
PINNED_BY = re.compile(r"Pinned by:? (.*?)(?:\.(?= |$)|$)")
DECISION_CITED = re.compile(r"(?<![\w+/-])D([0-9]+)\b")
# "seed 000:654-713", "seed 000:120, 312-317", "seed 002:546, 002:1480"
SEED_REFERENCE = re.compile(r"\bseed ([0-9]{3}):((?:[0-9]{3}:)?[0-9]+(?:-[0-9]+)?"
                            r"(?:, (?:[0-9]{3}:)?[0-9]+(?:-[0-9]+)?)*)")
SEED_FILE = re.compile(r"\b([0-9]{3})_[0-9a-f]{16}\.txt\b")
# "`000_ce324dca92f3d0b8.txt` (..., 1282 lines long)", not reaching past the next seed's name
SEED_LENGTH = re.compile(r"\b([0-9]{3})_[0-9a-f]{16}\.txt\b(?:(?![0-9]{3}_[0-9a-f]{16}).){0,200}?"
                         r"\b([0-9]+) lines long")
# What a **Defined here** mark must name: the upstream's counterpart, or its absence.
STANDS_IN_FOR = re.compile(r"\bupstream\b|not in the seed|the seed's own|the seed only calls|stands in for|"
                           r"\blikewise\b", re.I)
ONE_REASON = "fails it for exactly the one reason"
DIALECTS = {"http://json-schema.org/draft-07/schema#": "definitions",
            "https://json-schema.org/draft/2020-12/schema": "$defs"}
NOT_EXPRESSIBLE = "Not expressible here:"
ANNOTATIONS = ("$schema", "$id", "title", "description", "$defs", "definitions")
MIN_VALID_EXAMPLES, MIN_INVALID_EXAMPLES = 2, 3
# Every contract's audit has more rows, and its document more seed references, than these (53 to
# 73 rows, 61 to 110 references): fewer means a table or a form of reference was not read.
MIN_AUDIT_ROWS, MIN_SEED_REFERENCES = 40, 40


def _words(text):
    """text with every run of whitespace one space: phrases cross line breaks."""
    return " ".join(text.split())


def _cells(line):
    """The cells of one markdown table row (a `\\|` is not a separator)."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip()[1:-1])]


def _is_separator(line):
    return re.match(r"^\|[-:| ]+\|$", line.strip()) is not None


def _tables(lines):
    """Every markdown table of lines: [[cells of each row, header first]]."""
    tables, current = [], None
    for line in lines:
        if line.startswith("|"):
            if current is None:
                current = []
                tables.append(current)
            if not _is_separator(line):
                current.append(_cells(line))
        else:
            current = None
    return tables


# ---------------------------------------------------------------- the document, read once

Clause = collections.namedtuple("Clause", "id area number level line section")


class Document(object):
    """contract/<name>.md (under root) with its schemas and examples, parsed."""

    def __init__(self, name, root=ROOT):
        self.name = name
        self.files = ContractText(name, root)
        self.text = read(self.files.path)
        self.lines = self.text.splitlines()
        declared = DECLARED_FORM.search(self.text)
        self.prefix = declared.group(1) if declared else None
        # (line number, line, '## ' section title) of every line outside a code fence
        self.prose, fenced, section = [], False, ""
        for number, line in enumerate(self.lines, 1):
            if line.startswith("```"):
                fenced = not fenced
                continue
            if fenced:
                continue
            if line.startswith("## "):
                section = line
            self.prose.append((number, line, section))
        self.headings = [line for _n, line, _s in self.prose if line.startswith("## ")]
        self.clause_re = re.compile(r"^### (%s-([A-Z]+)-([1-9][0-9]*)) \((%s)\) \S"
                                    % (self.prefix or "[A-Z]+", "|".join(LEVELS)))
        self.clauses = []
        for number, line, section in self.prose:
            match = self.clause_re.match(line)
            if match:
                self.clauses.append(Clause(match.group(1), match.group(2), int(match.group(3)), match.group(4),
                                           number, section))
        self.clause_ids = {clause.id for clause in self.clauses}
        self.decisions = collections.OrderedDict()
        current = None
        for _number, line, section in self.prose:
            if section != "## Decisions" or line == section:
                continue
            match = DECISION_HEADING.match(line)
            if match:
                current = match.group(1)
                self.decisions[current] = []
            elif line.startswith("### "):
                current = None
            if current is not None:
                self.decisions[current].append(line)
        self.decisions = collections.OrderedDict((key, "\n".join(value)) for key, value in self.decisions.items())

    def section(self, heading):
        """The lines of the '## ' section heading (outside code fences), [] when there is none."""
        return [line for _n, line, section in self.prose if section == heading and line != heading]

    def clause_text(self, clause):
        body = []
        for line in self.lines[clause.line:]:
            if line.startswith("#"):
                break
            body.append(line)
        return "\n".join(body)

    def schema_names(self):
        if not os.path.isdir(self.files.schema_dir):
            return []
        return sorted(f[:-len(".schema.json")] for f in os.listdir(self.files.schema_dir)
                      if f.endswith(".schema.json"))

    def schemas(self):
        return collections.OrderedDict((name, self.files.schema(name)) for name in self.schema_names())

    def examples(self, kind):
        if not os.path.isdir(os.path.join(self.files.example_dir, kind)):
            return []
        return self.files.examples(kind)

    def schema_of(self, example):
        """The longest schema name the example's file name starts with, followed by '-' (None if none)."""
        for name in sorted(self.schema_names(), key=len, reverse=True):
            if example.startswith(name + "-"):
                return name
        return None


_DOCUMENTS = {}


def document(name):
    if name not in _DOCUMENTS:
        _DOCUMENTS[name] = Document(name)
    return _DOCUMENTS[name]


def known_clauses():
    """{clause prefix: its clause IDs} for every contract, so one document may cite another's."""
    return {doc.prefix: doc.clause_ids for doc in map(document, CONTRACTS)}


# ---------------------------------------------------------------- clauses

def heading_problems(doc):
    """Clause headings have the declared form; no other level-3 heading sits among clauses;
    a retired clause says it is retired."""
    if doc.prefix is None:
        return ["'How to read this document' declares no clause form "
                "(A clause is a heading `### <PREFIX>-<AREA>-<n> (LEVEL) Title`)"]
    problems = []
    sections_with_clauses = {clause.section for clause in doc.clauses}
    for number, line, section in doc.prose:
        if re.match(r"^#+\s*%s-" % doc.prefix, line) and not doc.clause_re.match(line):
            problems.append("line %d: not a clause heading of the declared form: %s" % (number, line))
        elif line.startswith("### ") and not doc.clause_re.match(line):
            if section == "## Decisions":
                if not DECISION_HEADING.match(line):
                    problems.append("line %d: a heading among the Decisions that is not `### D<n> Title`: %s"
                                    % (number, line))
            elif DECISION_HEADING.match(line):
                problems.append("line %d: a Decision outside '## Decisions': %s" % (number, line))
            elif section in sections_with_clauses:
                problems.append("line %d: a level-3 heading among clauses that is not a clause: %s" % (number, line))
    for clause in doc.clauses:
        if clause.level == "RETIRED" and "Retired" not in doc.clause_text(clause):
            problems.append("%s is RETIRED but its text does not say when and why" % clause.id)
    return problems


def numbering_problems(doc):
    """IDs are unique, and each area is numbered 1, 2, ... in document order (retired ones count)."""
    problems = []
    ids = [clause.id for clause in doc.clauses]
    problems += ["%s is used twice" % cid for cid in sorted({cid for cid in ids if ids.count(cid) > 1})]
    numbers = collections.OrderedDict()
    for clause in doc.clauses:
        numbers.setdefault(clause.area, []).append(clause.number)
    for area, found in numbers.items():
        if found != list(range(1, len(found) + 1)):
            problems.append("area %s is numbered %s, not 1 to %d" % (area, found, len(found)))
    if not doc.clauses:
        problems.append("no clause")
    return problems


def read_clause_list(text):
    """data/contract_clauses.txt: {clause ID: level}; one line per area, its levels in order."""
    levels = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            area, *found = line.split()
            for number, level in enumerate(found, 1):
                levels["%s-%d" % (area, number)] = level
    return levels


def clause_list_problems(doc, listed):
    """Every clause of the list is in the document at its level, and every clause of the
    document is listed: a clause is retired, never removed, renumbered or re-levelled silently."""
    problems = []
    present = {clause.id: clause.level for clause in doc.clauses}
    for cid, level in sorted(listed.items()):
        if cid.startswith((doc.prefix or "?") + "-"):
            if cid not in present:
                problems.append("%s (%s) is gone from the document: retire it instead" % (cid, level))
            elif present[cid] != level:
                problems.append("%s is %s in the document but %s in the clause list" % (cid, present[cid], level))
    for cid in sorted(set(present) - set(listed)):
        problems.append("%s is not in %s: add it there" % (cid, os.path.relpath(CLAUSE_LIST, ROOT)))
    return problems


def citation_problems(doc, known):
    """Every clause the text cites exists: in this contract, or in the one whose prefix it has.
    known: {prefix: clause IDs}."""
    prefixes = "|".join(sorted(known))
    text = _words(doc.text)
    problems = []

    def check(cid, how):
        if cid.split("-", 1)[0] in known and cid not in known[cid.split("-", 1)[0]]:
            problems.append("%s cites %s, which does not exist" % (how, cid))

    for cid in sorted(set(re.findall(r"\b((?:%s)-[A-Z]+-[0-9]+)\b" % prefixes, text))):
        check(cid, "the text")
    # "SCAN-TOKEN-5..7", "STEP-MANIFEST-1 to -4", "CRAWLER-CAP-1 to 9", "SESSION-X-1 to SESSION-X-3"
    for area, low, high in re.findall(r"\b((?:%s)-[A-Z]+)-([0-9]+)(?:\.\.| to )(?:\1-|-)?([0-9]+)\b" % prefixes, text):
        for number in range(int(low), int(high) + 1):
            check("%s-%d" % (area, number), "a range %s-%s..%s" % (area, low, high))
    areas = {cid.rsplit("-", 1)[0] for ids in known.values() for cid in ids}
    for area in sorted(set(re.findall(r"\b((?:%s)-[A-Z]+)-\*" % prefixes, text))):
        if area.split("-", 1)[0] in known and area not in areas:
            problems.append("the text cites %s-*, an area with no clause" % area)
    # Inside its own document "CONFIG-1" and "STOP-3" stand for <PREFIX>-CONFIG-1, ...
    own = sorted({clause.area for clause in doc.clauses})
    if own:
        for area, number in sorted(set(re.findall(r"(?<![A-Za-z0-9_-])(%s)-([0-9]+)\b" % "|".join(own), text))):
            check("%s-%s-%s" % (doc.prefix, area, number), "the short reference %s-%s" % (area, number))
    return problems


# ---------------------------------------------------------------- decisions

def decision_problems(doc, known):
    """Decisions D1, D2, ... in order; each pins at least one existing clause of its own
    contract; where the document pins with "Pinned by", every Decision has exactly one."""
    problems = []
    ids = list(doc.decisions)
    if not ids:
        return ["no '## Decisions' section with `### D<n> Title` entries"]
    if ids != ["D%d" % n for n in range(1, len(ids) + 1)]:
        problems.append("the Decisions are numbered %s, not D1 to D%d in order" % (ids, len(ids)))
    pins_by_line = any("Pinned by" in _words(text) for text in doc.decisions.values())
    for did, text in doc.decisions.items():
        text = _words(text)
        pinned = PINNED_BY.findall(text)
        if pins_by_line and len(pinned) != 1:
            problems.append("%s has %d 'Pinned by', not one (the document's other Decisions have one)"
                            % (did, len(pinned)))
        named = re.findall(r"\b([A-Z]+-[A-Z]+-[0-9]+)\b", " ".join(pinned) if pinned else text)
        if not any(cid.startswith(doc.prefix + "-") for cid in named):
            problems.append("%s pins no clause of this contract" % did)
        for cid in named:
            prefix = cid.split("-", 1)[0]
            if prefix in known and cid not in known[prefix]:
                problems.append("%s pins %s, which does not exist" % (did, cid))
    return problems


def decision_citation_problems(doc):
    """Every Decision the text cites ("(D6)", "D24 to D26", "D11, D20") exists."""
    problems = []
    for number in sorted(set(DECISION_CITED.findall(_words(doc.text))), key=int):
        if "D" + number not in doc.decisions:
            problems.append("D%s is cited but not decided" % number)
    return problems


# ---------------------------------------------------------------- the audit

def audit_tables(doc):
    return _tables(doc.section(AUDIT_HEADING))


def audit_problems(doc, min_rows=MIN_AUDIT_ROWS):
    """The audit comes just before the Decisions; each table has the four columns and a row;
    each stricter row names a safety reason and a Decision that exists and says it is
    stricter than the upstream; its upstream column cites a seed line or says it is not in
    the seed."""
    if AUDIT_HEADING not in doc.headings:
        return ["no section %r" % AUDIT_HEADING]
    problems = []
    at = doc.headings.index(AUDIT_HEADING)
    if doc.headings[at + 1:at + 2] != ["## Decisions"]:
        problems.append("the audit is followed by %r, not '## Decisions'" % doc.headings[at + 1:at + 2])
    tables = audit_tables(doc)
    if sum(len(table) - 1 for table in tables) < min_rows:
        problems.append("the audit has %d rows in %d tables, fewer than %d"
                        % (sum(len(table) - 1 for table in tables), len(tables), min_rows))
    for table in tables:
        if table[0] != AUDIT_COLUMNS:
            problems.append("an audit table's columns are %r, not %r" % (table[0], AUDIT_COLUMNS))
            continue
        if len(table) < 2:
            problems.append("an audit table has no row")
        for row in table[1:]:
            if len(row) != 4:
                problems.append("%r: %d cells, not 4" % (row[0], len(row)))
                continue
            last = row[3]
            if last == "-" or last.startswith("- ("):
                continue
            named = ["D" + n for n in re.findall(r"\bD([0-9]+)\b", last)]
            if not named:
                problems.append("%r: a stricter row names no Decision: %r" % (row[0], last))
            # "as `manifest_get` (D45)" repeats the reason of the row it names
            if not last.startswith("as ") and not any(reason in last for reason in SAFETY_REASONS):
                problems.append("%r: a stricter row names no safety reason: %r" % (row[0], last))
            if not SEED_REFERENCE.search(_words(row[1])) and "not in the seed" not in row[1]:
                problems.append("%r: the upstream's column of a stricter row cites no seed line: %r"
                                % (row[0], row[1]))
            for did in named:
                if did not in doc.decisions:
                    problems.append("%r: %s is not a Decision" % (row[0], did))
                    continue
                decided = _words(doc.decisions[did])
                if "stricter than the upstream" not in decided.lower():
                    problems.append("%s records a stricter point of %r but does not say 'stricter than the "
                                    "upstream'" % (did, row[0]))
                if not any(reason in decided for reason in SAFETY_REASONS):
                    problems.append("%s records a stricter point of %r without a safety reason" % (did, row[0]))
    return problems


def seed_references(doc):
    """[(seed number, first line, last line, the reference as written)] of every seed reference."""
    found = []
    for seed, items in SEED_REFERENCE.findall(_words(doc.text)):
        for item in items.split(", "):
            number = seed
            if ":" in item:
                number, item = item.split(":")
            first, _, last = item.partition("-")
            found.append((number, int(first), int(last or first), "seed %s:%s" % (number, item)))
    return found


def seed_lengths(doc):
    """{seed number: the length the audit gives it} ("`000_<digest>.txt` (..., 1282 lines long)")."""
    audit = _words("\n".join(doc.section(AUDIT_HEADING)))
    return {seed: int(length) for seed, length in SEED_LENGTH.findall(audit)}


def seed_name_problems(doc, min_references=MIN_SEED_REFERENCES):
    """The audit names the file of every seed the document cites and gives its length, and every
    seed line cited is within that length: checked here without the seeds themselves."""
    named = set(SEED_FILE.findall("\n".join(doc.section(AUDIT_HEADING))))
    lengths = seed_lengths(doc)
    problems = []
    references = seed_references(doc)
    for seed in sorted({ref[0] for ref in references}):
        if seed not in named:
            problems.append("the audit names no seed file %s_<digest>.txt, which the document cites" % seed)
        elif seed not in lengths:
            problems.append("the audit does not say how many lines seed %s has ('N lines long')" % seed)
    for seed, first, last, written in references:
        if seed in lengths and not 1 <= first <= last <= lengths[seed]:
            problems.append("%s: the audit says seed %s is %d lines long" % (written, seed, lengths[seed]))
    if len(references) < min_references:
        problems.append("%d seed references, fewer than %d" % (len(references), min_references))
    return problems


def seed_files(seed_dir):
    """{seed number: file name} of the seeds' README table."""
    text = read(os.path.join(seed_dir, "README.md"))
    return {match.group(1): match.group(0) for match in SEED_FILE.finditer(text)}


def seed_line_problems(doc, seed_dir):
    """Every seed line the document cites is a line of that seed, and not a blank one; every
    length it gives a seed is that seed's."""
    files = seed_files(seed_dir)
    lines, problems = {}, []
    for seed, file_name in files.items():
        with open(os.path.join(seed_dir, file_name), encoding="utf-8") as handle:
            lines[seed] = handle.read().split("\n")  # a last line without its newline counts
    for seed, length in sorted(seed_lengths(doc).items()):
        if seed in lines and length != len(lines[seed]):
            problems.append("the audit says seed %s is %d lines long; it has %d" % (seed, length, len(lines[seed])))
    for seed, first, last, written in seed_references(doc):
        if seed not in lines:
            problems.append("%s: the seeds' README lists no seed %s" % (written, seed))
        elif not 1 <= first <= last <= len(lines[seed]):
            problems.append("%s: seed %s has %d lines" % (written, seed, len(lines[seed])))
        elif not (lines[seed][first - 1].strip() and lines[seed][last - 1].strip()):
            problems.append("%s: a blank line of the seed" % written)
    return problems


def defined_here_problems(doc):
    """Every **Defined here** says what of the upstream it stands in for, in its table row or
    in its paragraph ("the upstream's X is not in the seed", "the upstream has no counterpart")."""
    problems = []
    paragraph_start = 0
    for i, line in enumerate(doc.lines):
        if not line.strip():
            paragraph_start = i + 1
        if "**Defined here" not in line:
            continue
        if line.startswith("|"):
            context = line
        else:
            end = i
            while end < len(doc.lines) and doc.lines[end].strip():
                end += 1
            context = " ".join(doc.lines[paragraph_start:end])
        if not STANDS_IN_FOR.search(context):
            problems.append("line %d: a **Defined here** that names nothing of the upstream: %s"
                            % (i + 1, line.strip()))
    return problems


# ---------------------------------------------------------------- schemas and examples

def schema_problems(doc):
    """Each schema uses only the subset conformance/schema.py implements, declares a dialect it
    follows ($defs or definitions, as the dialect spells them), has a title, says what it
    cannot express, describes a JSON object, and leans on no ignored annotation ("format")."""
    problems = []
    dialects = sorted({str(schema.get("$schema")) for schema in doc.schemas().values()})
    if len(dialects) > 1:
        problems.append("the schemas mix dialects: %s" % ", ".join(dialects))
    for name, schema in doc.schemas().items():
        problems += ["%s: %s is a keyword conformance/schema.py does not implement" % (name, where)
                     for where in unsupported(schema)]
        definitions = DIALECTS.get(schema.get("$schema"))
        if definitions is None:
            problems.append("%s: $schema %r is none of %s" % (name, schema.get("$schema"), sorted(DIALECTS)))
        if not schema.get("title"):
            problems.append("%s: no title" % name)
        if NOT_EXPRESSIBLE not in schema.get("description", ""):
            problems.append("%s: its description does not say %r what the clauses say instead"
                            % (name, NOT_EXPRESSIBLE))
        roots = schema.get("oneOf", schema.get("anyOf", [schema])) if "type" not in schema else [schema]
        if not all(isinstance(root, dict) and root.get("type") == "object" for root in roots):
            problems.append("%s: does not describe a JSON object" % name)
        for where, sub in subschemas(schema):
            if "format" in sub:
                problems.append("%s: %s uses 'format', which conformance/schema.py ignores" % (name, where))
            for spelling in set(DIALECTS.values()) - {definitions}:
                if spelling in sub:
                    problems.append("%s: %s uses %r; its dialect spells it %r" % (name, where, spelling, definitions))
    return problems


def ref_problems(doc):
    """Every $ref names a definition of its own schema ("#/$defs/name", or "#/definitions/name"
    in draft-07) and resolves, and every definition is referred to."""
    problems = []
    for name, schema in doc.schemas().items():
        refs = {sub["$ref"] for _where, sub in subschemas(schema) if "$ref" in sub}
        definitions = DIALECTS.get(schema.get("$schema"), "$defs")
        for ref in sorted(refs):
            node = schema
            for part in ref[2:].split("/"):
                node = node.get(part) if isinstance(node, dict) else None
            if not ref.startswith("#/%s/" % definitions) or node is None:
                problems.append("%s: $ref %s does not resolve to one of its %s" % (name, ref, definitions))
        for key in ("$defs", "definitions"):
            for definition in schema.get(key, {}):
                here = "#/%s/%s" % (key, definition)
                if not any(ref == here or ref.startswith(here + "/") for ref in refs):
                    problems.append("%s: %s is never referred to" % (name, here))
    return problems


def declared_copies(name, schema, names):
    """{definition: standalone schema} that schema holds copies of: a definition named as a
    shipped schema (runner_event: runner-event), or one its description says is a copy
    ("$defs/upload_capability ... copies of ... capability.schema.json")."""
    copies = {}
    for key in ("$defs", "definitions"):
        for definition in schema.get(key, {}):
            if definition.replace("_", "-") in names and definition.replace("_", "-") != name:
                copies[definition] = definition.replace("_", "-")
    for sentence in re.split(r"(?<=\.) ", schema.get("description", "")):
        if re.search(r"\bcop(y|ies) of\b", sentence):
            held = re.findall(r"\$defs/([a-z_]+)", sentence)
            originals = [a or b for a, b in re.findall(r"\b([a-z0-9-]+)\.schema\.json\b|\bschema ([a-z0-9-]+)\b",
                                                       sentence)]
            if len(held) == len(originals):
                copies.update(zip(held, originals))
    return copies


def copy_problems(doc):
    """conformance.schema resolves $ref within one file, so a schema carries copies of the
    schemas it includes: each copy equals its standalone schema (annotations aside), the
    standalone's own definitions come along unchanged, and a definition name means one thing
    in every schema of the contract."""
    problems = []
    schemas = doc.schemas()
    seen = {}
    for name, schema in schemas.items():
        definitions = schema.get("$defs", schema.get("definitions", {}))
        for definition, original in sorted(declared_copies(name, schema, schemas).items()):
            if original not in schemas or definition not in definitions:
                problems.append("%s: its copy %s of %s is missing" % (name, definition, original))
                continue
            copy = {k: v for k, v in definitions[definition].items() if k not in ("title", "description")}
            standalone = schemas[original]
            if copy != {k: v for k, v in standalone.items() if k not in ANNOTATIONS}:
                problems.append("%s: its copy %s differs from %s.schema.json" % (name, definition, original))
            for inner, value in standalone.get("$defs", standalone.get("definitions", {})).items():
                if definitions.get(inner) != value:
                    problems.append("%s: %s.schema.json's definition %s is missing or differs"
                                    % (name, original, inner))
        for definition, value in definitions.items():
            first = seen.setdefault(definition, (name, value))
            if value != first[1]:
                problems.append("%s: definition %s differs from %s's" % (name, definition, first[0]))
    return problems


def example_problems(doc):
    """Each example names its schema; valid ones validate; invalid ones fail it (exactly once
    where the document says each fails "for exactly the one reason" its name gives); each
    schema has at least 2 valid and 3 invalid examples."""
    problems = []
    once = ONE_REASON in _words("\n".join(doc.section(SCHEMAS_HEADING)))
    count = collections.Counter()
    for kind in ("valid", "invalid"):
        for example in doc.examples(kind):
            schema = doc.schema_of(example)
            if schema is None:
                problems.append("%s/%s names no schema (<schema>-<what it shows>.json)" % (kind, example))
                continue
            count[schema, kind] += 1
            try:
                errors = validate(doc.files.example(kind, example), doc.files.schema(schema))
            except (SchemaError, ValueError) as exc:
                problems.append("%s/%s: %s" % (kind, example, exc))
                continue
            if kind == "valid" and errors:
                problems.append("valid/%s does not validate: %s" % (example, errors))
            elif kind == "invalid" and not errors:
                problems.append("invalid/%s validates" % example)
            elif kind == "invalid" and once and len(errors) != 1:
                problems.append("invalid/%s fails %d times, not for exactly one reason: %s"
                                % (example, len(errors), errors))
    for schema in doc.schema_names():
        if count[schema, "valid"] < MIN_VALID_EXAMPLES or count[schema, "invalid"] < MIN_INVALID_EXAMPLES:
            problems.append("%s: %d valid and %d invalid examples, fewer than %d and %d"
                            % (schema, count[schema, "valid"], count[schema, "invalid"], MIN_VALID_EXAMPLES,
                               MIN_INVALID_EXAMPLES))
    return problems


def named_schemas(doc):
    """The schemas the document names: its contract/schemas/<name>/X.schema.json paths, and the
    last column of a table whose last column is 'schema'."""
    named = set(re.findall(r"contract/schemas/%s/([a-z0-9-]+)\.schema\.json" % re.escape(doc.name), doc.text))
    for table in _tables([line for _n, line, _s in doc.prose]):
        if table[0][-1] == "schema":
            for row in table[1:]:
                named.update(re.findall(r"`([a-z0-9-]+)`", row[-1]))
    return named


def documents_problems(doc):
    """The document has a section '## Schemas and examples' and names exactly the schemas shipped."""
    problems = [] if SCHEMAS_HEADING in doc.headings else ["no section %r" % SCHEMAS_HEADING]
    named, shipped = named_schemas(doc), set(doc.schema_names())
    problems += ["%s is shipped but the document names no such schema" % n for n in sorted(shipped - named)]
    problems += ["the document names a schema %s that is not shipped" % n for n in sorted(named - shipped)]
    if not shipped:
        problems.append("no schema in %s" % os.path.relpath(doc.files.schema_dir, ROOT))
    return problems


# ---------------------------------------------------------------- the tests

class ContractDocumentsTest(unittest.TestCase):
    """Every rule, for every contract."""

    maxDiff = None

    def check(self, rule, *args):
        for contract in CONTRACTS:
            with self.subTest(contract=contract):
                self.assertEqual(rule(document(contract), *args), [])

    def test_there_are_contracts(self):
        self.assertGreaterEqual(len(CONTRACTS), 4)

    def test_clause_headings_have_the_declared_form(self):
        self.check(heading_problems)

    def test_clause_ids_are_unique_and_each_area_is_numbered_from_one_without_a_gap(self):
        self.check(numbering_problems)

    def test_every_clause_stays_at_its_level(self):
        self.check(clause_list_problems, read_clause_list(read(CLAUSE_LIST)))

    def test_every_clause_cited_exists(self):
        self.check(citation_problems, known_clauses())

    def test_decisions_are_numbered_in_order_and_each_pins_an_existing_clause(self):
        self.check(decision_problems, known_clauses())

    def test_every_decision_cited_exists(self):
        self.check(decision_citation_problems)

    def test_the_audit_names_a_reason_and_a_decision_for_every_stricter_row(self):
        self.check(audit_problems)

    def test_every_seed_cited_is_named(self):
        self.check(seed_name_problems)

    def test_seed_references_are_lines_of_their_seed(self):
        found = [d for d in SEED_DIRS if os.path.exists(os.path.join(d, "README.md"))]
        if not found:
            self.skipTest("the seeds (../shared/seeds/) are not beside this checkout: a CI clone has none")
        self.check(seed_line_problems, found[0])

    def test_every_defined_here_says_what_it_stands_in_for(self):
        self.check(defined_here_problems)

    def test_schemas_use_the_supported_subset_and_say_what_they_cannot_express(self):
        self.check(schema_problems)

    def test_every_ref_resolves_and_every_definition_is_used(self):
        self.check(ref_problems)

    def test_copies_equal_their_schema(self):
        self.check(copy_problems)

    def test_examples_validate_or_fail_and_every_schema_has_them(self):
        self.check(example_problems)

    def test_the_document_names_the_shipped_schemas(self):
        self.check(documents_problems)


# ---------------------------------------------------------------- every rule can fail

DEMO_MD = """# The demo contract

## How to read this document

- A clause is a heading `### DEMO-<AREA>-<n> (LEVEL) Title` followed by its text.
- A paragraph marked **Defined here** names the upstream module it stands in for.

## Things

**Defined here**: the upstream's `things` module is not in the seed.

### DEMO-THING-1 (MUST) One thing

Text citing DEMO-THING-2, THING-1 and DEMO-THING-1..2 (D1).

### DEMO-THING-2 (RETIRED) Two things

Retired in version 2.

## Schemas and examples

- `contract/schemas/demo/doc.schema.json`: the document.
- Examples: every valid one validates against its schema and every invalid one fails it for
  exactly the one reason its name gives.

## Where we differ from the upstream

A reference `seed 009:1` is line 1 of `009_0123456789abcdef.txt` (3 lines long).

| document: member or aspect | the upstream accepts (seed line) | our node accepts | stricter because |
|---|---|---|---|
| `n` | anything (`seed 009:1`) | an integer | a bound does not hold (D1) |
| `m` | anything (`seed 009:1-3`) | the same | - |

## Decisions

### D1 n is bounded

- Decision: stricter than the upstream, because a bound does not hold otherwise. Pinned by
  DEMO-THING-1.
"""
DEMO_SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "A document",
               "description": "Not expressible here: nothing.", "type": "object", "required": ["n"],
               "properties": {"n": {"$ref": "#/$defs/count"}}, "additionalProperties": False,
               "$defs": {"count": {"type": "integer", "minimum": 0}}}
DEMO_EXAMPLES = {"valid/doc-zero.json": {"n": 0}, "valid/doc-one.json": {"n": 1},
                 "invalid/doc-negative.json": {"n": -1}, "invalid/doc-missing.json": {},
                 "invalid/doc-string.json": {"n": "1"}}
DEMO_CLAUSES = {"DEMO-THING-1": "MUST", "DEMO-THING-2": "RETIRED"}
DEMO_SEED = "line one\n\nline three"


def _text(old, new):
    """A mutation replacing old with new in contract/demo.md."""
    def mutate(root):
        path = os.path.join(root, "contract", "demo.md")
        text = read(path)
        assert old in text, old
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text.replace(old, new, 1))
    return mutate


def _file(relative, value):
    """A mutation writing value (JSON) to a file under contract/, or removing it when None."""
    def mutate(root):
        path = os.path.join(root, "contract", relative)
        if value is None:
            os.remove(path)
        else:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(value, handle)
    return mutate


def _both(*mutations):
    def mutate(root):
        for mutation in mutations:
            mutation(root)
    return mutate


def _schema(**changes):
    """A mutation of doc.schema.json: each keyword set (None removes it)."""
    schema = dict(DEMO_SCHEMA)
    for key, value in changes.items():
        key = {"schema": "$schema", "defs": "$defs", "ref": "$ref"}.get(key, key)
        if value is None:
            schema.pop(key)
        else:
            schema[key] = value
    return _file("schemas/demo/doc.schema.json", schema)


# (rule, what the document breaks, mutation, a part of the problem it must report)
BROKEN = [
    ("headings", "no declared clause form", _text("A clause is a heading", "A clause:"), "declares no clause form"),
    ("headings", "a level that is none of the four", _text("(MUST) One", "(MUSTN'T) One"), "declared form"),
    ("headings", "a clause heading at level 2", _text("### DEMO-THING-1", "## DEMO-THING-1"), "declared form"),
    ("headings", "a heading among clauses", _text("Retired in version 2.", "Retired.\n\n### Notes"),
     "among clauses that is not a clause"),
    ("headings", "a Decision outside Decisions",
     _text("## Schemas and examples", "### D2 Early\n\n## Schemas and examples"), "a Decision outside"),
    ("headings", "a retired clause that does not say so", _text("Retired in version 2.", "Gone."),
     "does not say when and why"),
    ("numbering", "a gap", _text("### DEMO-THING-2", "### DEMO-THING-3"), "numbered [1, 3]"),
    ("numbering", "an ID twice", _text("### DEMO-THING-2", "### DEMO-THING-1"), "used twice"),
    ("clause list", "a level changed", _text("(MUST) One", "(SHOULD) One"), "is SHOULD in the document but MUST"),
    ("clause list", "a clause removed", _text("### DEMO-THING-2 (RETIRED) Two things\n\nRetired in version 2.\n", ""),
     "DEMO-THING-2 (RETIRED) is gone"),
    ("clause list", "a clause added", _text("## Schemas and examples", "### DEMO-THING-3 (MAY) New\n\n## Schemas"),
     "DEMO-THING-3 is not in"),
    ("citations", "a clause that does not exist", _text("citing DEMO-THING-2", "citing DEMO-THING-4"),
     "cites DEMO-THING-4"),
    ("citations", "a range past the last clause", _text("DEMO-THING-1..2", "DEMO-THING-1..3"), "DEMO-THING-3"),
    ("citations", "a range written with 'to'", _text("DEMO-THING-1..2", "DEMO-THING-1 to -3"), "DEMO-THING-3"),
    ("citations", "an area that does not exist", _text("citing DEMO-THING-2", "citing DEMO-OTHER-*"),
     "DEMO-OTHER-*"),
    ("citations", "a short reference", _text("THING-1 and", "THING-7 and"), "short reference THING-7"),
    ("decisions", "no Decision", _text("### D1 n is bounded", "Nothing decided."), "no '## Decisions'"),
    ("decisions", "a Decision out of order", _text("### D1 n", "### D2 n"), "not D1 to D1"),
    ("decisions", "a Decision pinning nothing", _text("Pinned by\n  DEMO-THING-1.", "Settled."), "pins no clause"),
    ("decisions", "a Decision pinning a clause that does not exist",
     _text("Pinned by\n  DEMO-THING-1.", "Pinned by DEMO-THING-8."), "pins DEMO-THING-8"),
    ("decisions", "a Decision pinned twice", _text("DEMO-THING-1.\n", "DEMO-THING-1. Pinned by DEMO-THING-1.\n"),
     "2 'Pinned by'"),
    ("decisions", "one Decision not pinned where the others are",
     _text("  DEMO-THING-1.\n", "  DEMO-THING-1.\n\n### D2 More\n\nAbout DEMO-THING-1.\n"), "D2 has 0 'Pinned by'"),
    ("decision citations", "a Decision that does not exist", _text("(D1)", "(D1, D7)"), "D7 is cited"),
    ("audit", "no audit", _text("## Where we differ from the upstream", "## Differences"), "no section"),
    ("audit", "a section between the audit and the Decisions", _text("## Decisions", "## Later\n\n## Decisions"),
     "not '## Decisions'"),
    ("audit", "no row", _text("| `n` | anything (`seed 009:1`) | an integer | a bound does not hold (D1) |\n"
                              "| `m` | anything (`seed 009:1-3`) | the same | - |\n", ""), "fewer than 1"),
    ("audit", "a column missing", _text("| stricter because |", "|"), "columns are"),
    ("audit", "a row of three cells", _text("| the same | - |", "| - |"), "3 cells"),
    ("audit", "a stricter row without a Decision", _text("a bound does not hold (D1)", "a bound does not hold"),
     "names no Decision"),
    ("audit", "a stricter row without a safety reason", _text("a bound does not hold (D1)", "it is tidier (D1)"),
     "names no safety reason"),
    ("audit", "a stricter row's Decision that does not say so", _text("stricter than the upstream, because", "because"),
     "does not say 'stricter than the upstream'"),
    ("audit", "a stricter row citing no seed line", _text("anything (`seed 009:1`)", "anything"), "cites no seed line"),
    ("seed names", "the audit names no seed file", _text("of `009_0123456789abcdef.txt`", "of the seed"),
     "names no seed file 009"),
    ("seed names", "the audit gives no length", _text(" (3 lines long)", ""), "how many lines"),
    ("seed names", "a seed line past the length", _text("`seed 009:1-3`", "`seed 009:1-4`"), "3 lines long"),
    ("seed names", "no seed reference", _both(_text("A reference `seed 009:1` is", "The seed is"),
                                              _text(" (`seed 009:1`)", ""), _text(" (`seed 009:1-3`)", "")),
     "0 seed references"),
    ("seed lines", "a blank seed line", _text("`seed 009:1-3`", "`seed 009:2`"), "a blank line"),
    ("seed lines", "a length that is not the seed's", _text("(3 lines long)", "(4 lines long)"), "it has 3"),
    ("defined here", "a Defined here naming nothing",
     _text("the upstream's `things` module is not in the seed", "ours"), "names nothing of the upstream"),
    ("schemas", "an unsupported keyword", _schema(dependentRequired={}), "does not implement"),
    ("schemas", "no dialect", _schema(schema=None), "$schema None"),
    ("schemas", "no title", _schema(title=None), "no title"),
    ("schemas", "nothing said of what it cannot express", _schema(description="A document."), "Not expressible"),
    ("schemas", "not an object", _schema(type="array", required=None, properties=None, additionalProperties=None,
                                         items={"$ref": "#/$defs/count"}), "not describe a JSON object"),
    ("schemas", "an ignored annotation", _schema(properties={"n": {"$ref": "#/$defs/count", "format": "int"}}),
     "uses 'format'"),
    ("schemas", "the other dialect's definitions", _schema(definitions={}), "its dialect spells it '$defs'"),
    ("schemas", "two dialects", _file("schemas/demo/doc-list.schema.json", {
        "$schema": "http://json-schema.org/draft-07/schema#", "title": "A list", "type": "object",
        "description": "Not expressible here: nothing."}), "mix dialects"),
    ("refs", "a $ref that does not resolve", _schema(properties={"n": {"$ref": "#/$defs/number"}}), "does not resolve"),
    ("refs", "a $ref outside the definitions", _schema(properties={"n": {"$ref": "#/properties/n"}}),
     "does not resolve"),
    ("refs", "a definition never used", _schema(defs={"count": {"type": "integer", "minimum": 0}, "spare": {}}),
     "never referred to"),
    ("copies", "a copy that differs", _both(
        _file("schemas/demo/item.schema.json", dict(DEMO_SCHEMA, title="An item")),
        _schema(properties={"n": {"$ref": "#/$defs/count"}, "item": {"$ref": "#/$defs/item"}},
                defs={"count": {"type": "integer", "minimum": 0}, "item": {"type": "object"}})),
     "copy item differs from item.schema.json"),
    ("copies", "a declared copy that differs", _both(
        _file("schemas/demo/item.schema.json", dict(DEMO_SCHEMA, title="An item")),
        _schema(description="$defs/thing is a copy of item.schema.json. Not expressible here: nothing.",
                properties={"n": {"$ref": "#/$defs/count"}, "t": {"$ref": "#/$defs/thing"}},
                defs={"count": {"type": "integer", "minimum": 0}, "thing": {"type": "object"}})),
     "copy thing differs from item.schema.json"),
    ("copies", "a definition that means two things", _file("schemas/demo/doc-list.schema.json", dict(
        DEMO_SCHEMA, **{"$defs": {"count": {"type": "integer"}}})), "definition count differs"),
    ("examples", "a valid example that fails", _file("examples/demo/valid/doc-zero.json", {"n": -5}),
     "valid/doc-zero.json does not validate"),
    ("examples", "an invalid example that validates", _file("examples/demo/invalid/doc-negative.json", {"n": 5}),
     "invalid/doc-negative.json validates"),
    ("examples", "an invalid example failing twice", _file("examples/demo/invalid/doc-string.json", {"n": "1", "x": 1}),
     "not for exactly one reason"),
    ("examples", "an example naming no schema", _file("examples/demo/valid/other-zero.json", {"n": 0}),
     "names no schema"),
    ("examples", "too few examples", _file("examples/demo/invalid/doc-missing.json", None), "fewer than 2 and 3"),
    ("documents", "a schema the document does not name", _file("schemas/demo/spare.schema.json", DEMO_SCHEMA),
     "spare is shipped"),
    ("documents", "a schema named and not shipped",
     _text("the document.", "the document.\n- `contract/schemas/demo/gone.schema.json`: gone."),
     "gone that is not shipped"),
    ("documents", "no section 'Schemas and examples'", _text("## Schemas and examples", "## Examples"), "no section"),
]


class SyntheticDocumentTest(unittest.TestCase):
    """Every rule holds for a small well-formed contract, and reports each way of breaking it."""

    RULES = {
        "headings": heading_problems, "numbering": numbering_problems,
        "clause list": lambda doc: clause_list_problems(doc, DEMO_CLAUSES),
        "citations": lambda doc: citation_problems(doc, {doc.prefix: doc.clause_ids}),
        "decisions": lambda doc: decision_problems(doc, {doc.prefix: doc.clause_ids}),
        "decision citations": decision_citation_problems,
        "audit": lambda doc: audit_problems(doc, min_rows=1),  # the demo's audit has two rows
        "seed names": lambda doc: seed_name_problems(doc, min_references=1),
        "seed lines": None, "defined here": defined_here_problems, "schemas": schema_problems, "refs": ref_problems,
        "copies": copy_problems, "examples": example_problems, "documents": documents_problems,
    }

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="contract-")
        self.addCleanup(shutil.rmtree, self.root)
        seeds = os.path.join(self.root, "seeds")
        os.makedirs(seeds)
        with open(os.path.join(seeds, "README.md"), "w", encoding="utf-8") as handle:
            handle.write("| `009_0123456789abcdef.txt` | the demo's upstream | `contract/demo.md` |\n")
        with open(os.path.join(seeds, "009_0123456789abcdef.txt"), "w", encoding="utf-8") as handle:
            handle.write(DEMO_SEED)
        self.RULES = dict(self.RULES, **{"seed lines": lambda doc: seed_line_problems(doc, seeds)})

    def demo(self, mutation=None):
        """A fresh copy of the demo contract under its own root, mutated, read as a Document."""
        root = tempfile.mkdtemp(dir=self.root)
        for folder in ("schemas/demo", "examples/demo/valid", "examples/demo/invalid"):
            os.makedirs(os.path.join(root, "contract", folder))
        with open(os.path.join(root, "contract", "demo.md"), "w", encoding="utf-8") as handle:
            handle.write(DEMO_MD)
        _file("schemas/demo/doc.schema.json", DEMO_SCHEMA)(root)
        for relative, value in DEMO_EXAMPLES.items():
            _file("examples/demo/" + relative, value)(root)
        if mutation is not None:
            mutation(root)
        return Document("demo", root)

    def test_every_rule_is_broken_here(self):
        self.assertEqual(sorted({rule for rule, _what, _mutation, _problem in BROKEN}), sorted(self.RULES))

    def test_the_demo_keeps_every_rule(self):
        doc = self.demo()
        for rule, check in sorted(self.RULES.items()):
            with self.subTest(rule=rule):
                self.assertEqual(check(doc), [])

    def test_each_way_of_breaking_a_rule_is_reported(self):
        for rule, what, mutation, problem in BROKEN:
            with self.subTest(rule=rule, breaks=what):
                problems = self.RULES[rule](self.demo(mutation))
                self.assertTrue(any(problem in found for found in problems), problems)


if __name__ == "__main__":
    unittest.main()
