"""Traceability: clause -> checks -> mutants, with every hole named.

    python3 -m conformance.trace [CONTRACT ...]     # default: every contract with a checks package

Prints, per contract: each MUST clause with the checks citing it; each
SHOULD/MAY clause with its checks (shown, not a hole when empty); each
check with the mutants naming it in KILLS; each decision with the clauses it
pins. Exit 1 on any hole:

* a MUST clause no check cites, or a platform MUST clause cited only by
  example-work checks (a default run, which judges a user's node, would
  never judge it);
* a check citing a clause the contract does not define (or a retired one);
* a check no mutant names;
* a mutant naming a check that does not exist, or a malformed mutant;
* a decision that cites no clause, or a clause that does not exist.

A contract whose checks package sets IN_PROGRESS (its checks are still being
written) lists the first three kinds as planned work, not holes; the rest stay
holes.
"""

import sys

from conformance import checks as _checks
from conformance import clauses as _clauses
from conformance import mutants as _mutants
from conformance import static as _static


def trace(contract, out, planned=None):
    """Print the tables for one contract; returns the list of holes (strings).

    `planned`, a list, receives the coverage not yet written for a contract in
    progress (checks.in_progress) instead of the holes."""
    holes = []
    progress = _checks.in_progress(contract)
    coverage = holes if progress is None or planned is None else planned
    gap = "HOLE" if coverage is holes else "planned"
    try:
        doc = _clauses.load(contract)
    except _clauses.ContractNotFound as exc:
        out.write("%s: %s\n" % (contract, exc))
        return ["%s: no contract document" % contract]
    all_checks = _static.checks_for(contract) + _checks.load(contract)
    all_mutants = _mutants.load_all(contract)
    _checks.set_scopes(contract, all_checks)
    citing = {}
    platform_citing = {}
    for item in all_checks:
        for clause_id in item.clauses:
            citing.setdefault(clause_id, []).append(item.id)
            if item.scope == _checks.PLATFORM:
                platform_citing.setdefault(clause_id, []).append(item.id)
            clause = doc.clauses.get(clause_id)
            if clause is None:
                holes.append("check %s cites %s, which contract/%s.md does not define" % (item.id, clause_id, contract))
            elif clause.level not in _clauses.LEVELS:
                holes.append("check %s cites %s, which is %s" % (item.id, clause_id, clause.level))
    naming = {}
    ids = set(c.id for c in all_checks)
    for mutant in all_mutants:
        if mutant.problem:
            holes.append("mutant %s is malformed: %s" % (mutant.name, mutant.problem))
        for check_id in mutant.kills:
            naming.setdefault(check_id, []).append(mutant.name)
            if check_id not in ids:
                holes.append("mutant %s names %s, which is not a check" % (mutant.name, check_id))

    out.write("== %s: %s\n\n" % (contract, doc.title))
    width = max([len(c) for c in doc.clauses] + [12])
    out.write("MUST clause -> checks citing it\n")
    for clause in doc.clauses.values():
        if clause.level == "MUST":
            found = citing.get(clause.id, [])
            judged = found if clause.example else platform_citing.get(clause.id, [])
            shown = ", ".join(found) or "(none)"
            if clause.example:
                shown += "  [example work]"
            if not judged:
                shown += "  <- %s%s" % (gap, "" if not found else " (example-work checks only)")
            out.write("  %-*s  %s\n" % (width, clause.id, shown))
            if not found:
                coverage.append("MUST clause %s (%s) has no check" % (clause.id, clause.title))
            elif not judged:
                coverage.append("platform clause %s (%s) is cited only by example-work checks, which a "
                             "default run does not judge" % (clause.id, clause.title))
    others = [c for c in doc.clauses.values() if c.level in ("SHOULD", "MAY")]
    if others:
        out.write("\nSHOULD/MAY clause -> checks citing it\n")
        for clause in others:
            out.write("  %-*s  %-6s  %s\n" % (width, clause.id, clause.level,
                                               ", ".join(citing.get(clause.id, [])) or "(none)"))
    check_width = max([len(c.id) for c in all_checks] + [10])
    out.write("\ncheck -> mutants naming it\n")
    for item in all_checks:
        found = naming.get(item.id, [])
        out.write("  %-*s  %s%s\n" % (check_width, item.id, ", ".join(found) or "(none)  <- %s" % gap,
                                      "  [example work]" if item.scope == _checks.EXAMPLE else ""))
        if not found:
            coverage.append("check %s has no mutant" % item.id)
    if doc.decisions:
        out.write("\ndecision -> clauses it pins\n")
        for decision in doc.decisions.values():
            out.write("  %-5s %s\n" % (decision.id, ", ".join(decision.clauses) or "(none)  <- HOLE"))
            if not decision.clauses:
                holes.append("decision %s cites no clause" % decision.id)
            for clause_id in decision.clauses:
                if clause_id not in doc.clauses and not _elsewhere(clause_id, contract):
                    holes.append("decision %s cites %s, which does not exist" % (decision.id, clause_id))
    out.write("\n")
    return holes


def _elsewhere(clause_id, contract):
    """True when clause_id names a clause of another contract that exists there (a
    decision may build on another contract's clause: session D30 on CRAWLER-CHILD-4)."""
    other = clause_id.split("-", 1)[0].lower()
    if other == contract.lstrip("_") or other not in _checks.contracts():
        return False
    try:
        return clause_id in _clauses.load(other).clauses
    except _clauses.ContractNotFound:
        return False


def main(argv=None, out=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    out = out or sys.stdout
    if any(a.startswith("-") for a in argv):
        out.write("usage: python3 -m conformance.trace [CONTRACT ...]\n")
        return 0 if argv in (["-h"], ["--help"]) else 2
    known = _checks.contracts(include_private=True)
    names = argv or _checks.contracts()
    unknown = [n for n in names if n not in known]
    if unknown:
        sys.stderr.write("conformance.trace: error: unknown contract %s\n" % ", ".join(unknown))
        return 2
    holes, planned = [], {}
    for name in names:
        planned[name] = []
        holes.extend(trace(name, out, planned[name]))
    for name in names:
        if planned[name]:
            out.write("planned for %s (%d; in progress: %s):\n" % (name, len(planned[name]),
                                                                  _checks.in_progress(name)))
            for item in planned[name]:
                out.write("  - %s\n" % item)
    if holes:
        out.write("holes (%d):\n" % len(holes))
        for hole in holes:
            out.write("  - %s\n" % hole)
    later = ["%s: %d planned" % (name, len(items)) for name, items in planned.items() if items]
    out.write("trace: %s: %s%s\n" % (", ".join(names), "%d hole%s" % (len(holes), "" if len(holes) == 1 else "s")
                                                       if holes else "no hole",
                                     " (%s)" % "; ".join(later) if later else ""))
    return 1 if holes else 0


if __name__ == "__main__":
    sys.exit(main())
