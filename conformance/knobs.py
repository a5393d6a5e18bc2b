"""[EDIT] knobs: a node's own constants, turned, must leave the machinery working.

A person copies a node and changes what sits above its KEEP line: the
constants of section 2 (configuration) and section 3 (your work).  The
machinery below KEEP must derive what it needs from those constants, never
from the reference's values (a KEEP part that assumed a one-character
`PREVIEW_MARKER` broke every `sample_rows` answer of a copy that set it to
"...").  So every contract lists, for its reference node, each such constant
with another value from its documented domain and the platform checks that
touch it, and `make test` judges a copy of the node with all of them turned:

    python3 -m conformance.knobs session            # copy, turn, judge
    python3 -m conformance.knobs session --list     # the table

The table is `conformance/tests/knobs_<contract>.py`:

    KNOBS = [
        Knob("PREVIEW_MARKER", '"..."', checks=["probe.relations"],
             why="any non-empty text ends a cut string"),
        Knob("RESULT_MEDIA_TYPE", '"application/x.result+json"', checks=["upload.*"],
             deploy="RESULT_MEDIA_TYPE=application/x.result+json"),
    ]
    NOT_KNOBS = {"_CSV_INTEGER_RE": "a private helper of the reference work"}

`value` is Python source that replaces the constant's value expression; a
deployment constant also names the `--deploy` assignment that tells the
harness the same value (conformance/deployment.py).  Every upper-case name
assigned at module level above the KEEP line is either a Knob or in
NOT_KNOBS with a reason, so a new constant cannot slip past the table.
"""

import argparse
import ast
import importlib
import os
import re
import subprocess
import sys
import tempfile

from conformance.clauses import REPO_ROOT

KEEP_LINE = "# ---- Below this line: contract machinery [KEEP] ----"
_CONSTANT_RE = re.compile(r"_?[A-Z][A-Z0-9_]*")
_FAILED_RE = re.compile(r"^\s*(?:FAIL|NON-STRICT|ERROR)\s+(\S+)", re.M)


class Knob(object):
    """One [EDIT] constant, another value in its domain, and the checks that touch it."""

    def __init__(self, name, value, checks, why="", deploy=None):
        if not checks:
            raise ValueError("knob %s names no check" % name)
        self.name, self.value, self.checks, self.why = name, value, list(checks), why
        self.deploy = [deploy] if isinstance(deploy, str) else list(deploy or [])


def keep_line_number(text):
    """The 1-based line of the code KEEP line (not the docstring's mention of it); ValueError without one."""
    for number, line in enumerate(text.splitlines(), 1):
        if line == KEEP_LINE:
            return number
    raise ValueError("no line %r" % KEEP_LINE)


def edit_constants(text):
    """{name: ast.Assign} for every upper-case module-level name assigned above the KEEP line."""
    keep = keep_line_number(text)
    found = {}
    for statement in ast.parse(text).body:
        if statement.lineno >= keep:
            break
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name) and _CONSTANT_RE.fullmatch(target.id):
                    if target.id in found:
                        raise ValueError("%s is assigned twice above the KEEP line" % target.id)
                    found[target.id] = statement
    return found


def turn(text, values):
    """text with each named constant's value expression replaced by values[name] (Python source)."""
    constants = edit_constants(text)
    lines = text.splitlines(keepends=True)
    edits = []
    for name, source in values.items():
        if name not in constants:
            raise ValueError("%s is not a constant above the KEEP line" % name)
        value = constants[name].value
        edits.append((value.lineno, value.col_offset, value.end_lineno, value.end_col_offset, source))
    # From the bottom up, so earlier positions stay valid.
    for first, start, last, end, source in sorted(edits, reverse=True):
        head = lines[first - 1][:_byte_to_char(lines[first - 1], start)]
        tail = lines[last - 1][_byte_to_char(lines[last - 1], end):]
        lines[first - 1:last] = [head + source + tail]
    turned = "".join(lines)
    compile(turned, "<turned>", "exec")
    return turned


def _byte_to_char(line, offset):
    """ast's col_offset counts UTF-8 bytes; slicing a str needs characters."""
    return len(line.encode("utf-8")[:offset].decode("utf-8"))


def table(contract):
    """(KNOBS, NOT_KNOBS) of conformance/tests/knobs_<contract>.py."""
    module = importlib.import_module("conformance.tests.knobs_%s" % contract)
    return list(module.KNOBS), dict(getattr(module, "NOT_KNOBS", {}))


def problems(contract, node_text):
    """What is wrong with the table against the node: unlisted or unknown constants, unchanged values."""
    knobs, not_knobs = table(contract)
    constants = edit_constants(node_text)
    found = []
    listed = [k.name for k in knobs] + list(not_knobs)
    for name in sorted(set(constants) - set(listed)):
        found.append("%s is an [EDIT] constant with no row: add a Knob (or NOT_KNOBS with a reason)" % name)
    for name in sorted(set(listed) - set(constants)):
        found.append("%s has a row but is not a constant above the KEEP line" % name)
    for name in sorted(set(n for n in listed if listed.count(n) > 1)):
        found.append("%s has two rows" % name)
    for knob in knobs:
        if knob.name in constants:
            reference = ast.get_source_segment(node_text, constants[knob.name].value)
            if _same_value(reference, knob.value):
                found.append("%s: the turned value is the reference's own" % knob.name)
    return found


def _same_value(a, b):
    try:
        return ast.literal_eval(a) == ast.literal_eval(b)
    except (ValueError, SyntaxError):
        return a.strip() == b.strip()


def turned_copy(contract, node_path, directory):
    """Write node_path with every knob of the contract turned into directory; return its path."""
    knobs, _ = table(contract)
    with open(node_path, encoding="utf-8") as handle:
        text = handle.read()
    path = os.path.join(directory, "turned_" + os.path.basename(node_path))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(turn(text, dict((k.name, k.value) for k in knobs)))
    return path


def judge(contract, node_path, knobs, jobs=4, python=None):
    """Run the knobs' checks on node_path (a turned copy): (exit status, [failed check IDs], output)."""
    selection, deploy = [], []
    for knob in knobs:
        selection += [c for c in knob.checks if c not in selection]
        deploy += [d for d in knob.deploy if d not in deploy]
    argv = [python or sys.executable, "-m", "conformance", contract, node_path, "--jobs", str(jobs),
            "--only", ",".join(selection)]
    for item in deploy:
        argv += ["--deploy", item]
    proc = subprocess.run(argv, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL)
    out = proc.stdout.decode("utf-8", "replace")
    failed = sorted(set(_FAILED_RE.findall(out)))
    return proc.returncode, failed, out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m conformance.knobs",
                                     description="Judge a copy of a contract's reference node with every "
                                                 "[EDIT] constant turned to another value of its domain.")
    parser.add_argument("contract")
    parser.add_argument("--list", action="store_true", help="print the table and stop")
    parser.add_argument("--jobs", type=int, default=4)
    options = parser.parse_args(argv)
    from conformance import checks
    node = checks.reference_node(options.contract)
    if not node:
        parser.error("contract %s has no reference node" % options.contract)
    node_path = os.path.join(REPO_ROOT, node)
    with open(node_path, encoding="utf-8") as handle:
        found = problems(options.contract, handle.read())
    knobs, not_knobs = table(options.contract)
    if options.list:
        for knob in knobs:
            print("%-28s -> %-40s %s" % (knob.name, knob.value, ",".join(knob.checks)))
        for name, reason in sorted(not_knobs.items()):
            print("%-28s    not a knob: %s" % (name, reason))
        return 0
    for line in found:
        print("knobs: %s" % line)
    if found:
        return 1
    with tempfile.TemporaryDirectory(prefix="conformance-knobs-") as directory:
        path = turned_copy(options.contract, node_path, directory)
        status, failed, out = judge(options.contract, path, knobs, jobs=options.jobs)
    sys.stdout.write(out)
    if status != 0:
        print("knobs: a copy of %s with every [EDIT] constant turned fails %s" % (node, ", ".join(failed) or "(see above)"))
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
