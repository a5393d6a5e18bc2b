"""The text of a contract document, read for the contract tests.

    doc = ContractText("crawler")          # or ContractText(name, root): a copy elsewhere
    doc.decisions(DECISION_HEADING_RE)     # {"D1": text}
    doc.section("### CRAWLER-REPORT-1 "), table_rows(text)
    doc.schema("request"), doc.examples("valid"), doc.example("valid", name)
    subschemas(doc.schema("request"))      # (pointer, subschema) of every subschema

The contract tests parse contract/<name>.md here (test_contracts.py's Document on top of it),
apart from conformance.clauses, so that a defect in the harness's own reader cannot hide a
malformed document.
"""

import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def load_json(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def subschemas(node, where="#"):
    """Yield (JSON pointer, subschema) for a schema and every subschema below it."""
    if not isinstance(node, dict):
        return
    yield where, node
    for key, value in node.items():
        if key in ("properties", "$defs", "definitions", "patternProperties"):
            for name, sub in value.items():
                yield from subschemas(sub, "%s/%s/%s" % (where, key, name))
        elif key in ("items", "additionalProperties", "not", "if", "then", "else", "propertyNames"):
            if isinstance(value, list):
                for i, sub in enumerate(value):
                    yield from subschemas(sub, "%s/%s/%d" % (where, key, i))
            else:
                yield from subschemas(value, "%s/%s" % (where, key))
        elif key in ("anyOf", "oneOf", "allOf"):
            for i, sub in enumerate(value):
                yield from subschemas(sub, "%s/%s/%d" % (where, key, i))


def table_rows(text):
    """The cells of every data row of the markdown tables in text."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


class ContractText(object):
    def __init__(self, name, root=ROOT):
        self.name = name
        self.path = os.path.join(root, "contract", name + ".md")
        self.schema_dir = os.path.join(root, "contract", "schemas", name)
        self.example_dir = os.path.join(root, "contract", "examples", name)

    def lines(self):
        return read(self.path).splitlines()

    def decisions(self, heading_re):
        """{decision id: text} of the '## Decisions' section."""
        lines = self.lines()
        try:
            start = lines.index("## Decisions")
        except ValueError:
            return {}
        decisions, current = {}, None
        for line in lines[start + 1:]:
            if line.startswith("## "):
                break
            match = heading_re.match(line)
            if match:
                current = match.group(1)
                decisions[current] = []
            elif current is not None:
                decisions[current].append(line)
        return {key: "\n".join(value) for key, value in decisions.items()}

    def section(self, heading_prefix):
        """The text under the first heading that starts with heading_prefix, up to the next
        heading of the same or a higher level."""
        lines = self.lines()
        for i, line in enumerate(lines):
            if line.startswith(heading_prefix):
                level = len(line) - len(line.lstrip("#"))
                body = []
                for later in lines[i + 1:]:
                    hashes = len(later) - len(later.lstrip("#"))
                    if hashes and later[hashes:hashes + 1] == " " and hashes <= level:
                        break
                    body.append(later)
                return "\n".join(body)
        raise AssertionError("contract/%s.md has no heading starting %r" % (self.name, heading_prefix))

    def schema(self, name):
        return load_json(os.path.join(self.schema_dir, name + ".schema.json"))

    def examples(self, kind):
        folder = os.path.join(self.example_dir, kind)
        return sorted(f for f in os.listdir(folder) if f.endswith(".json"))

    def example(self, kind, name):
        return load_json(os.path.join(self.example_dir, kind, name))
