"""Mutants: prove that every check can fail.

    python3 -m conformance.mutants CONTRACT [--only NAME[,NAME...]] [--jobs N] [--covering]
    python3 -m conformance.mutants --rebase [CONTRACT]   # the anchors a node change broke

A mutant is a file ``conformance/mutants/<contract>/<name>.py``:

    \"\"\"One line: the behaviour this mutant breaks, and why a real node might.\"\"\"
    NODE = "nodes/hello_node.py"                 # relative to the repository root
    REPLACE = [("exact old text", "new text")]   # each old text occurs exactly once in NODE
    KILLS = ["stop.first-byte"]                  # checks that must not pass against it

The runner applies REPLACE to a copy of NODE, writes it to a temporary file,
runs ``python3 -m conformance CONTRACT <copy> --only <KILLS> --reference --json <file>
--full-waits`` in a subprocess, and reads the verdicts. The mutant is **killed** only when
every check in KILLS is FAIL (a MUST check) or NON-STRICT (a SHOULD or MAY
check); otherwise it **survived**. A mutant whose file is malformed, whose
old text is missing or occurs twice, or that names a check that does not
exist is **broken** (reported as ERROR). Exit 1 when any mutant survived or
is broken, or (on a full run, no --only) when a check of the contract is
killed by no mutant.

An old text is an **anchor on code**: it must occur exactly once verbatim, or
else exactly once once comments are dropped and whitespace collapsed
(`code_view`), so rewording a comment or re-indenting a line of the node
breaks no mutant; a change to the code it names does. `--rebase` lists every
broken anchor with the lines where it matched last (the node's git history)
and the lines most alike now, so the mutant can be rewritten in minutes.

`--covering` runs only a covering set: for every check, one mutant at least
that names it, chosen greedily (`covering_set`). `make test` runs that set, so
every check is still shown to fail in every run of it; `make mutants` runs them
all, so every mutant is shown to be killed. The unit tests apply every mutant to
its node, so a mutant whose old text drifted is caught either way.

Mutants are looked up in conformance/mutants/<contract>/, then in
conformance/tests/data/mutants/<contract>/ (the harness's own test contract).
The last line is ``mutants: N passed, N failed`` (killed counts as passed).
"""

import argparse
import ast
import concurrent.futures
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from conformance.clauses import PACKAGE_DIR, REPO_ROOT
from conformance.timeouts import LONG_TIMEOUT_S

MUTANT_DIRS = [os.path.join(PACKAGE_DIR, "mutants"), os.path.join(PACKAGE_DIR, "tests", "data", "mutants")]

KILLED, SURVIVED, BROKEN = "killed", "survived", "broken"


class Mutant:
    """One mutant file, loaded (problem is set when it is malformed)."""

    def __init__(self, name, path, doc=None, node=None, replace=(), kills=(), problem=None):
        self.name, self.path, self.doc = name, path, doc
        self.node, self.replace, self.kills = node, list(replace), list(kills)
        self.problem = problem

    def __repr__(self):
        return "Mutant(%r, kills=%r%s)" % (self.name, self.kills, ", broken" if self.problem else "")


class Outcome:
    """What running one mutant gave."""

    def __init__(self, mutant, status, verdicts=None, detail="", duration_s=0.0):
        self.mutant, self.status = mutant, status
        self.verdicts = verdicts or {}   # check id -> verdict
        self.detail = detail
        self.duration_s = duration_s


def mutants_dir(contract):
    for directory in MUTANT_DIRS:
        path = os.path.join(directory, contract)
        if os.path.isdir(path):
            return path
    return None


def load_file(path):
    """Read a mutant file without importing it: NODE, REPLACE and KILLS must be literals."""
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), path)
    except (OSError, SyntaxError, ValueError) as exc:
        return Mutant(name, path, problem="cannot read: %s" % exc)
    values = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
                isinstance(statement.targets[0], ast.Name):
            try:
                values[statement.targets[0].id] = ast.literal_eval(statement.value)
            except ValueError:
                return Mutant(name, path, problem="%s is not a literal" % statement.targets[0].id)
    doc = ast.get_docstring(tree)
    node, replace, kills = values.get("NODE"), values.get("REPLACE"), values.get("KILLS")
    problems = []
    if not doc:
        problems.append("no docstring saying what it breaks")
    if not isinstance(node, str):
        problems.append("NODE must be a path string")
    if not (isinstance(replace, (list, tuple)) and replace and all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(s, str) for s in p) for p in replace)):
        problems.append("REPLACE must be a non-empty list of (old, new) string pairs")
    if not (isinstance(kills, (list, tuple)) and kills and all(isinstance(k, str) for k in kills)):
        problems.append("KILLS must be a non-empty list of check IDs")
    return Mutant(name, path, doc, node, replace or (), kills or (), "; ".join(problems) or None)


def load_all(contract, directory=None):
    """Every mutant of a contract, sorted by name."""
    directory = directory or mutants_dir(contract)
    if directory is None:
        return []
    return [load_file(os.path.join(directory, f)) for f in sorted(os.listdir(directory))
            if f.endswith(".py") and not f.startswith("_")]


def code_view(text):
    """(view, where): text without its comments and with every run of whitespace made one space;
    where[i] is the index in text of view[i].

    A mutant's old text is an anchor on code: rewording a comment or re-indenting a
    line must not break it (only a change to the code it names may).  Strings are
    followed ('#' inside one is no comment; escapes and triple quotes included); a
    snippet is read as if it began in code.
    """
    view, where = [], []
    quote = None  # the open string's delimiter
    index, size = 0, len(text)
    pending_space = None  # index of the first whitespace character of a run not yet written

    def put(position, length=1):
        view.append(text[position:position + length])
        where.extend(range(position, position + length))

    def flush_space():
        if pending_space is not None and view:
            view.append(" ")
            where.append(pending_space)

    while index < size:
        char = text[index]
        if quote is None and char == "#":
            while index < size and text[index] != "\n":
                index += 1
            continue
        if quote is not None and char == "\n" and len(quote) == 1:
            quote = None  # an unterminated one-line string (a snippet cut mid-string): back to code
        if char.isspace():
            if pending_space is None:
                pending_space = index
            index += 1
            continue
        flush_space()
        pending_space = None
        if quote is None and char in "'\"":
            quote = text[index:index + 3] if text[index:index + 3] in ("'''", '"""') else char
            put(index, len(quote))
            index += len(quote)
        elif quote is not None and text.startswith(quote, index):
            put(index, len(quote))
            index += len(quote)
            quote = None
        elif quote is not None and char == "\\" and index + 1 < size:
            put(index, 2)
            index += 2
        else:
            put(index)
            index += 1
    return "".join(view), where


_views = {}  # the code views of the last few node texts: every mutant of a node anchors in the same text


def _source_view(source):
    key = (len(source), hash(source))
    if key not in _views:
        if len(_views) >= 8:
            _views.clear()
        _views[key] = code_view(source)
    return _views[key]


def _occurrences(haystack, needle):
    found, start = [], haystack.find(needle)
    while start >= 0:
        found.append(start)
        start = haystack.find(needle, start + 1)
    return found


def find_anchor(source, old):
    """(start, end, lead, trail) of the one place old's code occurs in source; ValueError otherwise.

    The exact text, when it occurs once, is that place.  Otherwise old is matched on
    its code (code_view): source[start:end] is the matched code, from its first to its
    last character; lead and trail are old's text around its own code (indentation,
    a trailing comment, the newline), for `apply` to fit the replacement."""
    exact = _occurrences(source, old)
    old_view, old_where = code_view(old)
    if len(exact) == 1:
        end = exact[0] + len(old)
        # An exact match that stops inside a comment the node has since lengthened would cut that
        # comment in two (a replacement without it leaves the rest as code): match on code instead.
        mid_comment = (old_view and "#" in old[old_where[-1] + 1:] and not old.endswith("\n")
                       and end < len(source) and source[end] != "\n")
        if not mid_comment:
            return exact[0], end, "", ""
    if not old_view:
        raise ValueError("old text has no code (a comment or whitespace alone anchors nothing): %r" % old[:80])
    view, where = _source_view(source)

    def word(char):
        return char.isalnum() or char == "_"

    # Whole tokens only: "x + 1" is not found inside "x + 10", nor "f(" inside "gf(".
    found = [at for at in _occurrences(view, old_view)
             if not (word(old_view[0]) and at > 0 and word(view[at - 1]))
             and not (word(old_view[-1]) and at + len(old_view) < len(view) and word(view[at + len(old_view)]))]
    if len(found) != 1:
        raise ValueError("old text occurs %d times in the node (must be exactly once), %d times as code: %r"
                         % (len(exact), len(found), old[:80]))
    first, last = found[0], found[0] + len(old_view) - 1
    return where[first], where[last] + 1, old[:old_where[0]], old[old_where[-1] + 1:]


def apply(source, replace):
    """source with every (old, new) applied; ValueError unless each old's code occurs exactly once.

    An old text that occurs verbatim is replaced as it is.  One whose comments or
    whitespace have changed since is found by its code (find_anchor); the new text
    then replaces that code, its own lead and trail fitted to the node's."""
    for index, (old, new) in enumerate(replace):
        try:
            start, end, lead, trail = find_anchor(source, old)
        except ValueError as problem:
            raise ValueError("REPLACE[%d]: %s" % (index, problem)) from None
        if new.startswith(lead) and new.endswith(trail) and len(new) >= len(lead) + len(trail):
            body = new[len(lead):len(new) - len(trail)]
        else:
            # The new text rewrites its lead or trail too: take the node's own in with the code.
            body = new
            line_start = source.rfind("\n", 0, start) + 1
            indent = source[line_start:start]
            if lead and not indent.strip():
                start = line_start  # the new text brings its own indentation (its lead is written out)
                if not lead.strip() and indent != lead:
                    # The code moved to another depth since the mutant was written: every line of the new
                    # text that starts at the old depth is moved with it, so the mutant still compiles.
                    body = "".join(indent + line[len(lead):] if line.startswith(lead) else line
                                   for line in body.splitlines(True))
            if trail.endswith("\n"):
                newline = source.find("\n", end)
                end = len(source) if newline < 0 else newline + 1
        source = source[:start] + body + source[end:]
    return source


def run_one(contract, mutant, seed=0, workdir=None, timeout=LONG_TIMEOUT_S):
    """Build and judge one mutant; returns an Outcome."""
    started = time.monotonic()
    if mutant.problem:
        return Outcome(mutant, BROKEN, detail=mutant.problem)
    node_path = mutant.node if os.path.isabs(mutant.node) else os.path.join(REPO_ROOT, mutant.node)
    try:
        with open(node_path, encoding="utf-8") as handle:
            mutated = apply(handle.read(), mutant.replace)
        # A mutant that does not compile is killed by the SyntaxError, not by its checks: no kill at all
        # (an anchor found at another indentation than the replacement's is the usual cause).
        compile(mutated, node_path, "exec")
    except (OSError, ValueError, SyntaxError) as exc:
        return Outcome(mutant, BROKEN, detail=str(exc))
    own = tempfile.mkdtemp(prefix="mutant-%s-" % mutant.name, dir=workdir)
    # Readable by every user, as a node file in a repository is: a check that
    # runs the node under another uid (crawler secret.dumpable) must reach it.
    os.chmod(own, 0o755)
    try:
        target = os.path.join(own, os.path.basename(node_path))
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(mutated)
        report_path = os.path.join(own, "report.json")
        # --reference: a mutant of a reference node may break its example work,
        # and the checks of that work run only in reference mode.
        argv = [sys.executable, "-m", "conformance", contract, target, "--only", ",".join(mutant.kills),
                "--reference", "--json", report_path, "--seed", str(seed), "--full-waits"]
        try:
            done = subprocess.run(argv, cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Outcome(mutant, BROKEN, detail="the conformance run did not finish in %.0f s" % timeout,
                           duration_s=time.monotonic() - started)
        output = done.stdout.decode("utf-8", "replace")
        try:
            with open(report_path, encoding="utf-8") as handle:
                report = json.load(handle)
        except (OSError, ValueError):
            tail = output.strip().splitlines()[-1:] or ["no output"]
            return Outcome(mutant, BROKEN, detail="conformance exited %d: %s" % (done.returncode, tail[0]),
                           duration_s=time.monotonic() - started)
    finally:
        shutil.rmtree(own, ignore_errors=True)
    verdicts = dict((c["id"], c["verdict"]) for c in report["checks"])
    levels = dict((c["id"], c["level"]) for c in report["checks"])
    missing = [k for k in mutant.kills if k not in verdicts]
    if missing:
        return Outcome(mutant, BROKEN, verdicts, "names checks that do not exist: %s" % ", ".join(missing),
                       time.monotonic() - started)
    alive = [k for k in mutant.kills if verdicts[k] != ("FAIL" if levels[k] == "MUST" else "NON-STRICT")
             and verdicts[k] != "FAIL"]
    status = SURVIVED if alive else KILLED
    detail = "" if not alive else "not failed: " + ", ".join("%s %s" % (k, verdicts[k]) for k in alive)
    return Outcome(mutant, status, verdicts, detail, time.monotonic() - started)


def covering_set(mutants):
    """A small set of well-formed mutants that together name every check any of
    them names: greedily the one naming the most checks not yet named (ties by
    name, so the set is the same on every machine), until none is left."""
    candidates = sorted((m for m in mutants if not m.problem), key=lambda m: m.name)
    uncovered = set(k for m in candidates for k in m.kills)
    chosen = []
    while uncovered:
        best = max(candidates, key=lambda m: (len(uncovered.intersection(m.kills)), -candidates.index(m)))
        chosen.append(best)
        uncovered.difference_update(best.kills)
    broken = [m for m in mutants if m.problem]   # reported, never silently dropped
    return sorted(chosen + broken, key=lambda m: m.name)


def run_mutants(contract, only=None, jobs=1, seed=0, directory=None, out=None, covering=False):
    """Run a contract's mutants (or a covering set of them) and print the tables;
    returns the exit status."""
    out = out or sys.stdout
    every = load_all(contract, directory)
    chosen = [m for m in every if not only or any(fnmatch.fnmatchcase(m.name, p) for p in only)]
    if covering:
        chosen = covering_set(chosen)
    if not chosen:
        out.write("mutants: no mutant of %s%s\n" % (contract, " matches --only" if only else ""))
        out.write("mutants: 0 passed, 1 failed\n")
        return 1
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        outcomes = list(pool.map(lambda m: run_one(contract, m, seed), chosen))
    width = max(len(o.mutant.name) for o in outcomes)
    out.write("mutants of %s (%d%s)\n\n" % (contract, len(outcomes), " of %d: a covering set, one mutant at least "
                                           "for every check" % len(every) if covering else ""))
    for outcome in outcomes:
        shown = ", ".join("%s %s" % (k, outcome.verdicts.get(k, "?")) for k in outcome.mutant.kills)
        status = "ERROR" if outcome.status == BROKEN else outcome.status
        out.write("  %-8s %-*s  %s%s\n" % (status, width, outcome.mutant.name, shown,
                                           "  (%s)" % outcome.detail if outcome.detail else ""))
    killers = {}
    for outcome in outcomes:
        if outcome.status == KILLED:
            for check_id in outcome.mutant.kills:
                killers.setdefault(check_id, []).append(outcome.mutant.name)
    unkilled = []
    if not only:
        from conformance import checks as _checks, static as _static
        ids = [c.id for c in _static.checks_for(contract) + _checks.load(contract)]
        unkilled = [i for i in ids if i not in killers]
        for check_id in killers:
            if check_id not in ids:
                ids.append(check_id)
    else:
        ids = sorted(killers)
    out.write("\ncheck -> mutants that killed it\n")
    id_width = max([len(i) for i in ids] + [10])
    for check_id in ids:
        out.write("  %-*s  %s\n" % (id_width, check_id, ", ".join(killers.get(check_id, [])) or "(none)"))
    survived = [o.mutant.name for o in outcomes if o.status == SURVIVED]
    broken = [o.mutant.name for o in outcomes if o.status == BROKEN]
    out.write("\n")
    if survived:
        out.write("survived: %s\n" % ", ".join(survived))
    if broken:
        out.write("broken (ERROR): %s\n" % ", ".join(broken))
    if unkilled:
        out.write("checks no mutant killed: %s\n" % ", ".join(unkilled))
    killed = len(outcomes) - len(survived) - len(broken)
    out.write("(%d mutants in %.1f s)\n" % (len(outcomes), time.monotonic() - started))
    out.write("mutants: %d passed, %d failed\n" % (killed, len(survived) + len(broken) + (1 if unkilled else 0)))
    out.flush()
    return 1 if survived or broken or unkilled else 0


def _node_history(node_path, limit=40):
    """[(short revision, text)] of the node file in git, newest first; [] outside a checkout."""
    relative = os.path.relpath(node_path, REPO_ROOT)
    try:
        revisions = subprocess.run(["git", "log", "--format=%h", "-n", str(limit), "--", relative], cwd=REPO_ROOT,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    for revision in revisions.stdout.decode().split():
        shown = subprocess.run(["git", "show", "%s:%s" % (revision, relative)], cwd=REPO_ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if shown.returncode == 0:
            yield revision, shown.stdout.decode("utf-8", "replace")


def _context(text, start, end, around=2, mark=">"):
    """Numbered lines of text around [start, end), the anchor's lines marked."""
    first = text.count("\n", 0, start)
    last = text.count("\n", 0, max(start, end - 1))
    lines = text.splitlines()
    shown = []
    for number in range(max(0, first - around), min(len(lines), last + around + 1)):
        shown.append("  %s %5d | %s" % (mark if first <= number <= last else " ", number + 1, lines[number]))
    return shown


def rebase_report(contracts, out, directory=None):
    """For every mutant whose anchor no longer matches its node: where it matched last (git history) and the
    node's most similar lines now.  Returns how many anchors are broken."""
    import difflib
    broken = 0
    for contract in contracts:
        for mutant in load_all(contract, directory):
            if mutant.problem:
                continue
            node_path = mutant.node if os.path.isabs(mutant.node) else os.path.join(REPO_ROOT, mutant.node)
            with open(node_path, encoding="utf-8") as handle:
                source = handle.read()
            for index, (old, new) in enumerate(mutant.replace):
                try:
                    start, end, _lead, _trail = find_anchor(source, old)
                except ValueError as problem:
                    broken += 1
                    out.write("%s REPLACE[%d]: %s\n" % (os.path.relpath(mutant.path, REPO_ROOT), index, problem))
                    for revision, text in _node_history(node_path):
                        try:
                            then, until, _l, _t = find_anchor(text, old)
                        except ValueError:
                            continue
                        out.write("  matched in %s at %s:\n" % (mutant.node, revision))
                        out.write("\n".join(_context(text, then, until)) + "\n")
                        break
                    else:
                        out.write("  matched in no recent revision of %s\n" % mutant.node)
                    first_code = next((line for line in old.splitlines() if line.split("#")[0].strip()), old)
                    lines = source.splitlines()
                    wanted = code_view(first_code)[0]
                    scores = [(difflib.SequenceMatcher(None, wanted, code_view(line)[0]).ratio(), number)
                              for number, line in enumerate(lines) if line.strip()]
                    ratio, number = max(scores) if scores else (0.0, 0)
                    offset = sum(len(line) + 1 for line in lines[:number])
                    out.write("  most alike now (%d %%), line %d:\n" % (round(100 * ratio), number + 1))
                    out.write("\n".join(_context(source, offset, offset + len(lines[number]) if lines else 0)) + "\n")
                    break
                source = apply(source, [(old, new)])  # a later pair anchors on the text this one left
    out.write("mutants: %d anchor%s broken\n" % (broken, "" if broken == 1 else "s"))
    return broken


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m conformance.mutants",
                                     description="Run every mutant of a contract's reference node; each must be "
                                                 "killed by the checks it names.")
    parser.add_argument("contract", metavar="CONTRACT", nargs="?", help="the contract (every one with --rebase)")
    parser.add_argument("--rebase", action="store_true",
                        help="run nothing: list every anchor a change of its node broke, where it matched last "
                             "(git history) and the node's most alike lines now")
    parser.add_argument("--only", metavar="NAME[,NAME...]", help="mutant names (globs)")
    parser.add_argument("--jobs", metavar="N", type=int, default=1, help="mutants run in parallel")
    parser.add_argument("--seed", metavar="N", type=int, default=0)
    parser.add_argument("--dir", metavar="DIR", help="read mutants from DIR instead of the contract's directory")
    parser.add_argument("--covering", action="store_true",
                        help="run only a covering set: for every check, one mutant at least that names it")
    options = parser.parse_args(argv)
    from conformance import checks as _checks
    if options.rebase:
        contracts = [options.contract] if options.contract else _checks.contracts()
        return 1 if rebase_report(contracts, sys.stdout) else 0
    if options.contract not in _checks.contracts(include_private=True):
        sys.stderr.write("conformance.mutants: error: unknown contract %r\n" % options.contract)
        return 2
    only = [p for p in (options.only or "").split(",") if p]
    return run_mutants(options.contract, only, options.jobs, options.seed, options.dir, covering=options.covering)


if __name__ == "__main__":
    sys.exit(main())
