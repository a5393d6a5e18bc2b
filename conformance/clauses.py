"""Read a contract document's clauses, so no check ever retypes a requirement.

    from conformance import clauses
    doc = clauses.load("step")
    clause = doc.clauses["STEP-STOP-2"]     # Clause(id, level, title, text, section)
    doc.decisions["D7"]                      # Decision(id, title, text, clauses)

Format read (contract/<name>.md):

* ``## Title`` starts a section; every clause below it belongs to it. A
  section whose title ends with ``[example work]`` holds clauses about the
  reference node's example work (what it does with the inputs), not the
  platform's obligations: ``Clause.example`` is True for them, and a default
  harness run does not judge them (``--reference`` does).
* ``### <ID> (<LEVEL>) <Title>`` starts a clause; its text is everything up
  to the next heading of any level. IDs are ``<CONTRACT>-<AREA>-<n>``;
  LEVEL is MUST, SHOULD or MAY (anything else in the parentheses, such as
  RETIRED, is kept as written and is not a requirement).
* In the section whose title starts with "Decisions", each entry is either a
  heading ``### D<n> Title`` followed by text, or a list item
  ``- D<n> text``. Clause IDs mentioned in an entry are collected.
* Headings inside fenced code blocks are ignored.

Documents are looked up in ``contract/`` at the repository root, then in
``conformance/tests/data/contract/`` (the harness's own test contract).
"""

import os
import re
import threading

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(PACKAGE_DIR)
CONTRACT_DIRS = [os.path.join(REPO_ROOT, "contract"),
                 os.path.join(PACKAGE_DIR, "tests", "data", "contract")]

LEVELS = ("MUST", "SHOULD", "MAY")
EXAMPLE_MARK = "[example work]"
CLAUSE_ID = re.compile(r"\b([A-Z][A-Z0-9]*-[A-Z][A-Z0-9]*-[0-9]+)\b")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_CLAUSE_HEADING = re.compile(r"^([A-Z][A-Z0-9]*-[A-Z][A-Z0-9]*-[0-9]+)\s+\(([A-Za-z]+)\)\s*(.*)$")
_DECISION_HEADING = re.compile(r"^(D[0-9]+)\b[.:)]?\s*(.*)$")
_DECISION_ITEM = re.compile(r"^\s*[-*]\s+\**(D[0-9]+)\b\**[.:)]?\s*(.*)$")


class ContractNotFound(LookupError):
    """No document for this contract name in CONTRACT_DIRS."""


class Clause:
    """One numbered requirement of a contract."""

    __slots__ = ("id", "level", "title", "text", "section", "line")

    def __init__(self, id, level, title, text, section, line=0):
        self.id, self.level, self.title, self.text, self.section, self.line = id, level, title, text, section, line

    @property
    def example(self):
        """True for a clause about the reference node's example work (its
        section's title ends with [example work]); False for a platform obligation."""
        return bool(self.section) and self.section.rstrip().endswith(EXAMPLE_MARK)

    @property
    def area(self):
        """The middle part of the ID: STOP for STEP-STOP-2."""
        return self.id.split("-")[1]

    def __repr__(self):
        return "Clause(%r, %r, %r)" % (self.id, self.level, self.title)


class Decision:
    """One entry of the Decisions section."""

    __slots__ = ("id", "title", "text", "clauses")

    def __init__(self, id, title, text, clauses):
        self.id, self.title, self.text, self.clauses = id, title, text, clauses

    def __repr__(self):
        return "Decision(%r, %r, clauses=%r)" % (self.id, self.title, self.clauses)


class Contract:
    """A parsed contract document."""

    def __init__(self, name, path, title, clauses, sections, decisions):
        self.name = name
        self.path = path
        self.title = title            # the document's `# ` heading, or the name
        self.clauses = clauses        # id -> Clause, in document order
        self.sections = sections      # [(section title, [clause ids])] in document order
        self.decisions = decisions    # id -> Decision, in document order

    def section_of_area(self, area):
        """Title of the section holding clauses of this area (e.g. STOP), or None."""
        area = area.upper()
        for clause in self.clauses.values():
            if clause.area == area and clause.section:
                return clause.section
        return None

    def required(self):
        """The MUST clauses, in document order."""
        return [c for c in self.clauses.values() if c.level == "MUST"]

    def __repr__(self):
        return "Contract(%r, %d clauses, %d decisions)" % (self.name, len(self.clauses), len(self.decisions))


def clause_prefix(contract):
    """The ID prefix of a contract's clauses: "step" -> "STEP", "_selftest" -> "SELFTEST"."""
    return contract.strip("_").upper().replace("_", "")


def find(contract):
    """Path of contract/<name>.md, or raise ContractNotFound."""
    for directory in CONTRACT_DIRS:
        path = os.path.join(directory, contract + ".md")
        if os.path.isfile(path):
            return path
    raise ContractNotFound("no contract document %s.md in %s" % (contract, " or ".join(CONTRACT_DIRS)))


def parse(text, name="contract", path=None):
    """Parse contract text into a Contract."""
    title = name
    clauses, sections, decisions = {}, [], {}
    section = None
    current = None        # ("clause", Clause, lines) or ("decision", id, title, lines)
    in_decisions = False
    in_fence = False

    def finish():
        if current is None:
            return
        body = "\n".join(current[-1]).strip()
        if current[0] == "clause":
            current[1].text = body
        else:
            full = (current[2] + "\n" + body).strip()
            decisions[current[1]] = Decision(current[1], current[2], body, _cited(full))

    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            if current is not None:
                current[-1].append(line)
            continue
        heading = None if in_fence else _HEADING.match(line)
        if heading is None:
            item = _DECISION_ITEM.match(line) if in_decisions and not in_fence else None
            if item:
                finish()
                current = ("decision", item.group(1), item.group(2).strip(), [])
            elif current is not None:
                current[-1].append(line)
            continue
        depth, content = len(heading.group(1)), heading.group(2)
        finish()
        current = None
        if depth == 1:
            title = content
        elif depth == 2:
            section = content
            sections.append((section, []))
            in_decisions = content.lower().startswith("decisions")
        else:
            found = _CLAUSE_HEADING.match(content)
            decision = _DECISION_HEADING.match(content) if in_decisions else None
            if found:
                clause_id, level, clause_title = found.group(1), found.group(2).upper(), found.group(3).strip()
                if clause_id in clauses:
                    raise ValueError("%s:%d: clause %s defined twice" % (path or name, number, clause_id))
                clause = Clause(clause_id, level, clause_title, "", section, number)
                clauses[clause_id] = clause
                if sections:
                    sections[-1][1].append(clause_id)
                current = ("clause", clause, [])
            elif decision:
                current = ("decision", decision.group(1), decision.group(2).strip(), [])
    finish()
    return Contract(name, path, title, clauses, sections, decisions)


def _cited(text):
    seen = []
    for found in CLAUSE_ID.findall(text):
        if found not in seen:
            seen.append(found)
    return seen


_cache_lock = threading.Lock()
_cache = {}


def load(contract):
    """The parsed contract/<contract>.md (cached while the file is unchanged)."""
    path = find(contract)
    stamp = os.stat(path).st_mtime_ns
    with _cache_lock:
        hit = _cache.get(path)
        if hit and hit[0] == stamp:
            return hit[1]
    with open(path, encoding="utf-8") as handle:
        parsed = parse(handle.read(), contract, path)
    with _cache_lock:
        _cache[path] = (stamp, parsed)
    return parsed


def available():
    """Names of every contract document found."""
    names = set()
    for directory in CONTRACT_DIRS:
        try:
            names.update(n[:-3] for n in os.listdir(directory) if n.endswith(".md"))
        except OSError:
            pass
    return sorted(names)
