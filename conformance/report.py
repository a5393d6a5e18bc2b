"""Reports: the terminal tree, JUnit XML and JSON.

Terminal: one block per contract section (checks grouped by area; the
section title is the contract's ``## `` heading holding that area's clauses),
one line per check: verdict, id, title, duration. A check that did not pass
also shows the clause text of every clause it cites (read from the contract,
never retyped), Expected, Actual, Diagnosis and the command that reruns it
alone; ``-v`` adds every check's transcript.

Counting (the last line is always
``conformance: N passed, N failed, N not judged, N skipped``):

* passed     = PASS + NON-STRICT (a SHOULD not met is reported, not failed;
  with ``--strict`` such a check is already FAIL);
* failed     = FAIL + ERROR. ERROR is a harness fault, not the node's, but a
  run with one proved nothing, so it is not green; a line above the summary
  says how many of the failures are errors;
* not judged = NOT-JUDGED: the node hung in three other checks and this
  check's shortened wait ran out.  Listed with the failures, each with the
  command that judges it alone; a run with one is not green either;
* skipped    = SKIP: the machine cannot run the check (no PID namespace...).

Exit status (`exit_status`): 0 when nothing failed and everything was judged, 1 otherwise.

Causes: an invariant (a leaked secret, scratch left behind, no receipt) is
judged after every check, so one defect can fail a dozen checks.  `causes`
groups the failures by the invariant they broke; every report says each
cause once, with the clause it breaks (the ID its name begins with) and the
checks it failed, and the card of a check that failed only through it says
"see cause N" instead of quoting the check's own, unrelated clauses.
"""

import json
import re
import textwrap
import xml.etree.ElementTree as ET

from conformance import clauses as _clauses
from conformance.checks import ERROR, FAIL, NON_STRICT, NOT_JUDGED, PASS, SKIP, VERDICTS

WIDTH = 100


class RunReport:
    """Everything a report needs about one conformance run."""

    def __init__(self, contract, node, seed, results, strict=False, repeat=1, wall_s=None, notes=(),
                 incomplete=None, interpreter=None, cpu=None):
        self.contract = contract
        self.node = node              # how the user named the node
        self.seed = seed
        self.results = list(results)  # CheckResult, in run order
        self.strict = strict
        self.repeat = repeat
        self.wall_s = wall_s
        self.notes = list(notes)      # header lines (capabilities, options)
        self.incomplete = incomplete  # why the run stopped early (an interrupt), or None
        self.interpreter = interpreter  # what ran the node: "/path/python (Python 3.9.18)"
        self.cpu = cpu                # (harness CPU s, nodes' CPU s) of the run, or None


def counts(results):
    """Counts by verdict plus the three summary numbers."""
    by = dict((v, 0) for v in VERDICTS)
    for result in results:
        by[result.verdict] += 1
    by["passed"] = by[PASS] + by[NON_STRICT]
    by["failed"] = by[FAIL] + by[ERROR]
    by["not_judged"] = by[NOT_JUDGED]
    by["skipped"] = by[SKIP]
    return by


def summary_line(numbers):
    return "conformance: %d passed, %d failed, %d not judged, %d skipped" % (
        numbers["passed"], numbers["failed"], numbers["not_judged"], numbers["skipped"])


def exit_status(results):
    """0 when every required check passed (NON-STRICT and SKIP allowed), else 1."""
    return 1 if any(r.verdict in (FAIL, ERROR, NOT_JUDGED) for r in results) else 0


class Cause(object):
    """One invariant broken in one or more checks of a run: said once in every report."""

    def __init__(self, number, violation):
        self.number = number
        self.name = violation.name
        match = _CLAUSE_IN_NAME.match(violation.name)
        self.clause_id = match.group(1) if match else None
        self.first = violation   # Expected, Actual and Diagnosis as the first check saw them
        self.results = []

    def check_ids(self):
        return [r.id for r in self.results]


# An invariant's name begins with the clause it holds: "STEP-REDACT-1: no credential leaves the process".
_CLAUSE_IN_NAME = re.compile(r"^([A-Z][A-Z0-9]*-[A-Z][A-Z0-9]*-\d+)")


def causes(results):
    """[Cause] in order of first appearance, one per invariant name broken by any result."""
    found = {}
    for result in results:
        for violation in getattr(result, "violations", ()):
            cause = found.get(violation.name)
            if cause is None:
                cause = found[violation.name] = Cause(len(found) + 1, violation)
            if result not in cause.results:
                cause.results.append(result)
    return sorted(found.values(), key=lambda c: c.number)


def causes_of(result, all_causes):
    return [c for c in all_causes if result in c.results]


def unmet_clauses(results, all_causes):
    """[(clause ID, what failed it)]: each cause's own clause, then the clauses cited by checks whose own
    assertions failed, in order of first appearance."""
    unmet = {}
    for cause in all_causes:
        if cause.clause_id:
            unmet.setdefault(cause.clause_id, []).append("cause %d (%d check%s)" % (
                cause.number, len(cause.results), "" if len(cause.results) == 1 else "s"))
    for result in results:
        if result.verdict in (FAIL, NON_STRICT) and getattr(result, "own_failure", True):
            for clause_id in result.clauses:
                unmet.setdefault(clause_id, []).append(result.id)
    return list(unmet.items())


_VERSION = re.compile(r"^Version (\S+)", re.M)


def contract_version(contract):
    """The contract document's version (its `Version N (...)` line), or None."""
    doc = _contract_doc(contract)
    if doc is None or not doc.path:
        return None
    try:
        with open(doc.path, encoding="utf-8") as handle:
            match = _VERSION.search(handle.read(4096))
    except OSError:
        return None
    return match.group(1) if match else None


def versions_line(contract):
    """`harness 2026.12.1, contract step version 3`: what every report records."""
    from conformance import __version__
    version = contract_version(contract)
    return "harness %s, contract %s%s" % (__version__, contract, " version %s" % version if version else "")


def _contract_doc(contract):
    try:
        return _clauses.load(contract)
    except (_clauses.ContractNotFound, OSError, ValueError):
        return None


def sections(report):
    """[(area, section title, [results])] in order of first appearance."""
    doc = _contract_doc(report.contract)
    order, grouped = [], {}
    for result in report.results:
        if result.area not in grouped:
            order.append(result.area)
            grouped[result.area] = []
        grouped[result.area].append(result)
    made = []
    for area in order:
        title = doc.section_of_area(area) if doc else None
        if not title:
            title = area
        elif "(%s)" % area not in title:
            title = "%s (%s)" % (title, area)
        made.append((area, title, grouped[area]))
    return made


_ITEM = re.compile(r"^\s*(?:[-*]|\d+\.)\s")


def _paragraphs(text):
    """Join the contract's hard-wrapped source lines into logical lines: a new
    one starts at a blank line, a list item or a table row; anything else
    continues the line before it."""
    joined = []
    for raw in text.splitlines():
        if not raw.strip():
            joined.append("")
        elif (joined and joined[-1] and not _ITEM.match(raw) and not raw.lstrip().startswith("|")
              and not joined[-1].lstrip().startswith("|")):
            joined[-1] = joined[-1].rstrip() + " " + raw.strip()
        else:
            joined.append(raw.rstrip())
    return joined or [""]


def _wrap(text, indent):
    lines = []
    for raw in _paragraphs(text):
        if not raw.strip():
            lines.append("")
            continue
        lead = len(raw) - len(raw.lstrip())
        if raw.lstrip().startswith("|"):
            lines.append(indent + raw)
            continue
        item = _ITEM.match(raw)
        wrapped = textwrap.wrap(raw.strip(), width=max(40, WIDTH - len(indent) - lead),
                                subsequent_indent=" " * (len(item.group(0)) - lead) if item else "")
        lines.extend(indent + " " * lead + part for part in wrapped)
    return lines


def _labelled(label, value, indent):
    text = "%s" % (value,)
    first, *rest = text.splitlines() or [""]
    out = ["%s%-10s %s" % (indent, label + ":", first)]
    out.extend("%s%-10s %s" % (indent, "", line) for line in rest)
    return out


def _stability(result):
    if result.stability is None:
        return ""
    tally = {}
    for verdict in result.runs:
        tally[verdict] = tally.get(verdict, 0) + 1
    detail = ", ".join("%s %d" % item for item in sorted(tally.items()))
    return "  [%s: %s]" % (result.stability, detail)


def render_text(report, verbose=False):
    """The terminal report; its last line is the summary line."""
    doc = _contract_doc(report.contract)
    all_causes = causes(report.results)
    lines = ["conformance %s %s  (seed %s%s)" % (report.contract, report.node, report.seed,
                                                  ", strict" if report.strict else ""),
             "  " + versions_line(report.contract)]
    lines.extend("  " + note for note in report.notes)
    id_width = max([len(r.id) for r in report.results] + [10])
    for area, title, results in sections(report):
        lines.append("")
        lines.append(title)
        for result in results:
            tail = "%.2f s" % result.duration_s
            if result.verdict == SKIP and result.reason:
                tail += "  (%s)" % result.reason
            lines.append("  %-10s %-*s  %s  %s%s" % (result.verdict, id_width, result.id, result.title, tail,
                                                     _stability(result)))
            if result.verdict == NOT_JUDGED:
                lines.extend(_labelled("Why", result.reason, " " * 13))
                lines.extend(_labelled("Rerun", result.repro, " " * 13))
            mine = causes_of(result, all_causes)
            if mine and not result.own_failure:
                indent = " " * 13
                lines.extend(_labelled("Cause", "; ".join("see cause %d below (%s)" % (c.number, c.name)
                                                          for c in mine), indent))
                lines.extend(_labelled("Rerun", result.repro, indent))
            elif result.verdict in (FAIL, NON_STRICT, ERROR):
                indent = " " * 13
                for clause_id in result.clauses:
                    clause = doc.clauses.get(clause_id) if doc else None
                    if clause is None:
                        lines.append("%s%s: (not found in contract/%s.md)" % (indent, clause_id, report.contract))
                        continue
                    lines.append("%s%s (%s) %s" % (indent, clause.id, clause.level, clause.title))
                    lines.extend(_wrap(clause.text, indent + "  "))
                lines.extend(_labelled("Expected", result.expected, indent))
                lines.extend(_labelled("Actual", result.actual, indent))
                if result.diagnosis:
                    lines.extend(_labelled("Diagnosis", result.diagnosis, indent))
                if mine:
                    lines.extend(_labelled("Also", "; ".join("cause %d below (%s)" % (c.number, c.name)
                                                             for c in mine), indent))
                lines.extend(_labelled("Rerun", result.repro, indent))
            if verbose and result.transcript:
                lines.append(" " * 13 + "Transcript:")
                lines.extend(" " * 15 + line for line in result.transcript)
    lines.extend(_render_causes(doc, report.contract, all_causes))
    unmet = unmet_clauses(report.results, all_causes)
    if unmet:
        lines.append("")
        lines.append("Clauses not met (%d):" % len(unmet))
        width = max(len(clause_id) for clause_id, _ in unmet)
        lines.extend("  %-*s  %s" % (width, clause_id, _some(what)) for clause_id, what in unmet)
    numbers = counts(report.results)
    lines.append("")
    if numbers[NON_STRICT]:
        lines.append("(%d non-strict: SHOULD clauses not met, counted as passed; --strict makes them failures)"
                     % numbers[NON_STRICT])
    if numbers[ERROR]:
        lines.append("(%d error%s: harness faults, not the node's; counted as failed)"
                     % (numbers[ERROR], "" if numbers[ERROR] == 1 else "s"))
    if numbers[NOT_JUDGED]:
        lines.append("(%d not judged: the node hung in other checks first; fix those, then rerun each as its "
                     "Rerun line says)" % numbers[NOT_JUDGED])
    if report.wall_s is not None:
        lines.append("(%d checks in %.1f s; %s)" % (len(report.results), report.wall_s, cost_line(report)))
    if report.incomplete:
        lines.append("INCOMPLETE: %s" % report.incomplete)
    lines.append(summary_line(numbers))
    return "\n".join(lines) + "\n"


# A list longer than this is cut in the terminal (the JSON and HTML reports keep it whole).
SHOWN_IN_A_LIST = 10


def _some(names):
    if len(names) <= SHOWN_IN_A_LIST + 1:
        return ", ".join(names)
    return "%s and %d more" % (", ".join(names[:SHOWN_IN_A_LIST]), len(names) - SHOWN_IN_A_LIST)


def _render_causes(doc, contract, all_causes):
    if not all_causes:
        return []
    lines = ["", "Causes: invariants this run broke, each said once with the checks it failed"]
    indent = " " * 13
    for cause in all_causes:
        lines.append("  Cause %d: %s  (%d check%s)" % (cause.number, cause.name, len(cause.results),
                                                    "" if len(cause.results) == 1 else "s"))
        clause = doc.clauses.get(cause.clause_id) if doc and cause.clause_id else None
        if clause is not None:
            lines.append("%s%s (%s) %s" % (indent, clause.id, clause.level, clause.title))
            lines.extend(_wrap(clause.text, indent + "  "))
        elif cause.clause_id:
            lines.append("%s%s: (not found in contract/%s.md)" % (indent, cause.clause_id, contract))
        lines.extend(_labelled("Expected", cause.first.expected, indent))
        lines.extend(_labelled("Actual", "%s  (in %s)" % (cause.first.actual, cause.results[0].id), indent))
        if cause.first.diagnosis:
            lines.extend(_labelled("Diagnosis", cause.first.diagnosis, indent))
        lines.extend(_labelled("Checks", _some(cause.check_ids()), indent))
        lines.extend(_labelled("Rerun", cause.results[0].repro, indent))
    return lines


def cost_line(report):
    """What the run cost: node starts, and CPU seconds of the harness and of the nodes when known."""
    text = "%d node starts" % sum(getattr(r, "node_starts", 0) for r in report.results)
    if report.cpu is not None:
        text += "; CPU %.1f s harness, %.1f s nodes" % report.cpu
    return text


def to_json(report):
    """The --json document."""
    numbers = counts(report.results)
    all_causes = causes(report.results)
    checks = []
    for result in report.results:
        entry = {"id": result.id, "clauses": list(result.clauses), "level": result.level, "title": result.title,
                 "section": result.area, "scope": getattr(result, "scope", "platform"),
                 "verdict": result.verdict, "duration_s": round(result.duration_s, 4),
                 "node_starts": getattr(result, "node_starts", 0)}
        if result.stability is not None:
            entry["stability"] = result.stability
            entry["runs"] = list(result.runs)
        if result.verdict in (SKIP, NOT_JUDGED):
            entry["reason"] = result.reason
        if result.verdict == NOT_JUDGED:
            entry["repro"] = result.repro
        if result.verdict in (FAIL, NON_STRICT, ERROR):
            entry.update(expected=result.expected, actual=result.actual, diagnosis=result.diagnosis,
                         repro=result.repro, transcript=list(result.transcript))
        mine = causes_of(result, all_causes)
        if mine:
            entry["causes"] = [c.number for c in mine]
            entry["own_failure"] = result.own_failure
        checks.append(entry)
    from conformance import __version__
    return {"contract": report.contract, "contract_version": contract_version(report.contract),
            "harness_version": __version__, "node": report.node, "seed": report.seed, "strict": report.strict,
            "interpreter": report.interpreter, "notes": list(report.notes),
            "incomplete": report.incomplete, "summary": numbers, "wall_s": report.wall_s,
            "cpu_s": None if report.cpu is None else {"harness": report.cpu[0], "nodes": report.cpu[1]},
            "causes": [{"number": c.number, "invariant": c.name, "clause": c.clause_id, "checks": c.check_ids(),
                        "expected": c.first.expected, "actual": c.first.actual, "diagnosis": c.first.diagnosis}
                       for c in all_causes],
            "checks": checks}


def write_json(report, path):
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(to_json(report), handle, indent=2, sort_keys=False)
        handle.write("\n")


def to_junit(report):
    """JUnit XML: one testsuite for the contract, one testcase per check."""
    numbers = counts(report.results)
    root = ET.Element("testsuites")
    # JUnit has no "not judged": such a check is an error (the run could not judge it), typed not-judged.
    suite = ET.SubElement(root, "testsuite", name=report.contract, tests=str(len(report.results)),
                          failures=str(numbers[FAIL]), errors=str(numbers[ERROR] + numbers[NOT_JUDGED]),
                          skipped=str(numbers[SKIP]),
                          time="%.3f" % sum(r.duration_s for r in report.results))
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="node", value=str(report.node))
    ET.SubElement(props, "property", name="seed", value=str(report.seed))
    ET.SubElement(props, "property", name="versions", value=versions_line(report.contract))
    if report.interpreter:
        ET.SubElement(props, "property", name="interpreter", value=report.interpreter)
    if report.incomplete:
        ET.SubElement(props, "property", name="incomplete", value=report.incomplete)
    all_causes = causes(report.results)
    for result in report.results:
        case = ET.SubElement(suite, "testcase", classname="%s.%s" % (report.contract, result.area),
                             name=result.id, time="%.3f" % result.duration_s)
        mine = ["cause %d: invariant %s, broken in %d checks (%s)" % (
            c.number, c.name, len(c.results), ", ".join(c.check_ids())) for c in causes_of(result, all_causes)]
        details = "\n".join(mine + ["clauses: %s (%s)" % (", ".join(result.clauses), result.level),
                             "expected: %s" % result.expected, "actual: %s" % result.actual,
                             "diagnosis: %s" % (result.diagnosis or ""), "rerun: %s" % result.repro]
                            + list(result.transcript))
        if result.verdict == FAIL:
            ET.SubElement(case, "failure", message="expected %s; actual %s" % (result.expected, result.actual),
                          type=result.level).text = details
        elif result.verdict == ERROR:
            ET.SubElement(case, "error", message=str(result.reason), type="harness").text = details
        elif result.verdict == NOT_JUDGED:
            ET.SubElement(case, "error", message="not judged: %s" % result.reason, type="not-judged").text = \
                "rerun: %s" % result.repro
        elif result.verdict == SKIP:
            ET.SubElement(case, "skipped", message=str(result.reason))
        elif result.verdict == NON_STRICT:
            ET.SubElement(case, "system-out").text = "NON-STRICT (SHOULD not met)\n" + details
    return ET.ElementTree(root)


def write_junit(report, path):
    tree = to_junit(report)
    tree.write(path, encoding="utf-8", xml_declaration=True)
