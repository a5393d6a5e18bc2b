"""The project's own test entry points, called by the Makefile.

    python3 -m conformance.suite test        # everything; the command CI runs
    python3 -m conformance.suite check-fast  # the quick subset (under 60 s)
    python3 -m conformance.suite help FILE   # the Makefile's target list
    python3 -m conformance.suite clean

`test` runs each stage as a subprocess, shows its output as it comes, reads
the stage's own counts, and ends with one line `N passed, N failed, N skipped`
summing them. Counting rules: one unittest test is one unit; one conformance
check is one unit; one mutant is one unit (killed = passed); a stage that
reports no counts (block sync, traceability) is one unit. The exit status is
1 when anything failed, so CI cannot land a red tree.
"""

import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable


def reference_nodes():
    """[(contract, node)] of every public contract with a reference node: the registry
    is conformance/checks/ (a package per contract, its REFERENCE_NODE)."""
    from conformance import checks
    pairs = [(name, checks.reference_node(name)) for name in checks.contracts()]
    return [(name, node) for name, node in pairs if node]


REFERENCE_NODES = reference_nodes()
REFERENCE_NODES_BY = dict(REFERENCE_NODES)
COVERING_JOBS = 6  # mutants run at once in make test's covering sets (see stages)


def derivatives():
    """[(contract, path)] of the examples/*.py derived from a reference node
    (`Derived from nodes/X.py` in their docstring; conformance/sync.py keeps
    their machinery identical to it). They are judged like a user's node:
    without --reference."""
    from conformance import sync
    contract_of = dict((path, contract) for contract, path in REFERENCE_NODES)
    found = []
    for path, reference in sync.derivative_paths(ROOT):
        contract = contract_of.get(os.path.relpath(reference, ROOT))
        if contract:
            found.append((contract, os.path.relpath(path, ROOT)))
    return found


def area_sample(contract):
    """The first and the last platform check of every area of a contract: the
    selection `make test` runs on each derivative, so that every area is
    exercised within the time budget (`make conformance` runs them whole)."""
    from conformance import checks
    chosen, by_area = [], {}
    for item in checks.load(contract):
        if item.scope == checks.PLATFORM:
            by_area.setdefault(item.area, []).append(item.id)
    for ids in by_area.values():
        for check_id in (ids[0], ids[-1]):
            if check_id not in chosen:
                chosen.append(check_id)
    return chosen + ["node.*"]

_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in", re.M)
_UNITTEST_TAIL = re.compile(r"^(OK|FAILED)(?: \((.*)\))?\s*$", re.M)
_SUMMARY = re.compile(r"^(?:\w+: )?(\d+) passed, (\d+) failed(?:, (\d+) not judged)?(?:, (\d+) skipped)?\s*$",
                      re.M)


class Counts:
    def __init__(self, passed=0, failed=0, skipped=0):
        self.passed, self.failed, self.skipped = passed, failed, skipped

    def add(self, other):
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped

    def line(self):
        return "%d passed, %d failed, %d skipped" % (self.passed, self.failed, self.skipped)


def _run(title, argv, env=None):
    """Run one stage, echo its output, return (exit status, output text)."""
    print("\n==== %s: %s" % (title, " ".join(argv[1:] if argv[0] == PY else argv)), flush=True)
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env=env)
    chunks = []
    for raw in iter(proc.stdout.readline, b""):
        text = raw.decode("utf-8", "replace")
        chunks.append(text)
        sys.stdout.write(text)
        sys.stdout.flush()
    proc.stdout.close()
    status = proc.wait()
    print("==== %s: exit %d in %.1f s" % (title, status, time.monotonic() - started), flush=True)
    return status, "".join(chunks)


def _run_shards(title, argvs, env=None):
    """Run one stage as several processes at once; echo each one's output when it ends; return
    (worst exit status, outputs joined)."""
    print("\n==== %s: %d shards: %s" % (title, len(argvs), " | ".join(
        " ".join(argv[1:4]) + " ..." for argv in argvs)), flush=True)
    started = time.monotonic()
    procs = [subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, env=env) for argv in argvs]
    outputs, statuses = [], []
    for proc in procs:
        text = proc.communicate()[0].decode("utf-8", "replace")
        outputs.append(text)
        statuses.append(proc.returncode)
        sys.stdout.write(text)
        sys.stdout.flush()
    status = max(statuses, key=abs)
    print("==== %s: exit %d in %.1f s" % (title, status, time.monotonic() - started), flush=True)
    return status, SHARD_BREAK.join(outputs)


SHARD_BREAK = "\n==== next shard ====\n"  # between the outputs of a sharded stage, for its reader


def unit_test_shards(count=2):
    """`python3 -m unittest` argvs over every test module of conformance/tests/, dealt round-robin
    from the slowest down (measured once, 2026-12-04) so the shards end together."""
    names = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, "conformance", "tests"))
                   if name.startswith("test_") and name.endswith(".py"))
    order = [n for n in SLOW_TESTS if n in names] + [n for n in names if n not in SLOW_TESTS]
    shards = [order[i::count] for i in range(count)]
    return [[PY, "-m", "unittest"] + ["conformance.tests.%s" % n for n in shard] for shard in shards if shard]


# The slowest unit-test modules, slowest first (make test, 2026-12-04); the rest take a few seconds each.
SLOW_TESTS = ["test_edit_knobs", "test_mutants", "test_bench_step", "test_bench_session", "test_diagnoses",
              "test_deployment_scan", "test_bench_scan", "test_scan_runner", "test_contract_worker", "test_pythons",
              "test_dist", "test_framework", "test_blocks", "test_lifecycle", "test_servers", "test_cli"]


def unittest_counts(status, out):
    """Counts from unittest's closing lines; a crash before them is one failure."""
    counts = Counts()
    for part in out.split(SHARD_BREAK):  # a sharded stage: each shard's own closing lines
        ran = _UNITTEST_RAN.findall(part)
        tail = _UNITTEST_TAIL.findall(part)
        if not ran or not tail:
            return Counts(failed=1)
        total, detail = ran[-1], tail[-1][1]
        details = dict(item.split("=", 1) for item in detail.split(", ") if "=" in item)
        failed = int(details.get("failures", 0)) + int(details.get("errors", 0)) + int(
            details.get("unexpected successes", 0))
        skipped = int(details.get("skipped", 0)) + int(details.get("expected failures", 0))
        counts.add(Counts(int(total) - failed - skipped, failed, skipped))
    if status != 0 and counts.failed == 0:
        counts.failed = 1
    return counts


def summary_counts(status, out):
    """Counts from a stage that ends with `[word: ]N passed, N failed[, N not judged][, N skipped]`;
    a check not judged counts as failed (the run proved nothing about it)."""
    found = _SUMMARY.findall(out)
    if not found:
        return Counts(failed=1)
    passed, failed, not_judged, skipped = found[-1]
    counts = Counts(int(passed), int(failed) + int(not_judged or 0), int(skipped or 0))
    if status != 0 and counts.failed == 0:
        counts.failed = 1
    return counts


def single_counts(status, _out):
    return Counts(passed=1) if status == 0 else Counts(failed=1)


def contract_unit_tests(contract):
    """The unit-test modules of one contract: conformance/tests/test_*<contract>*.py, and the tests
    that hold every contract (the documents' rules, the knobs)."""
    names = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, "conformance", "tests"))
                   if name.startswith("test_") and name.endswith(".py") and contract in name[5:-3].split("_"))
    return ["conformance.tests.%s" % name for name in names + ["test_contracts", "test_edit_knobs"]]


def stages(fast, contract=None):
    """make test's stages; with a contract, only that contract's share (make test CONTRACT=scan)."""
    chosen = [(c, n) for c, n in REFERENCE_NODES if contract in (None, c)]
    yield "block sync", [PY, "-m", "conformance.sync", "--check"], single_counts
    yield "traceability", [PY, "-m", "conformance.trace"] + [c for c, _ in chosen], single_counts
    if contract is None:
        yield "harness unit tests", unit_test_shards(), unittest_counts
    else:
        yield "unit tests of %s" % contract, [PY, "-m", "unittest"] + contract_unit_tests(contract), unittest_counts
    for contract, node in chosen:
        if fast:
            yield "static checks %s" % node, [PY, "-m", "conformance", contract, node,
                                              "--only", "node.*"], summary_counts
        else:
            # The default --jobs: more checks start while the CPUs idle (conformance/schedule.py).
            yield "conformance %s" % node, [PY, "-m", "conformance", contract, node, "--reference"], summary_counts
    if not fast:
        for contract, path in [(c, p) for c, p in derivatives() if (c, REFERENCE_NODES_BY.get(c)) in chosen]:
            yield "derivative %s (every area)" % path, [PY, "-m", "conformance", contract, path, "--jobs", "4",
                                                        "--only", ",".join(area_sample(contract))], summary_counts
        # A covering set: every check is shown to fail against a mutant in every
        # make test; `make mutants` runs every mutant (conformance/mutants.py).
        # Six at a time: a mutant's checks mostly wait for its node (measured on 2 cores,
        # 2026-12-04: 953 s for the four sets at 2, 408 s at 6, the parent using about one
        # core). Load makes a check slow or failed, which kills a mutant; only a harness ERROR
        # would spare one, and none came in those runs.
        for contract, _node in chosen:
            yield "mutants %s (a covering set)" % contract, [PY, "-m", "conformance.mutants", contract,
                                                             "--jobs", str(COVERING_JOBS), "--covering"], summary_counts


def reference_stages(kind, contract=None, node=None):
    """`make conformance` / `make mutants`: every reference node (or one node
    of one contract, for people judging their own)."""
    if kind == "conformance":
        pairs = [(contract, node)] if contract and node else REFERENCE_NODES + derivatives()
        for name, path in pairs:
            # The reference nodes are judged on their example work too; any other node is not.
            reference = ["--reference"] if (name, path) in REFERENCE_NODES else []
            yield "conformance %s" % path, [PY, "-m", "conformance", name, path] + reference, summary_counts
    else:
        for name, _path in REFERENCE_NODES:
            if contract in (None, name):
                yield "mutants %s" % name, [PY, "-m", "conformance.mutants", name, "--jobs", "2"], summary_counts


def interpreters():
    """{(major, minor): path} of the Pythons from 3.9 on this machine: on PATH (python3.N) and pyenv's."""
    import glob
    found = {}
    candidates = [shutil.which("python3.%d" % minor) for minor in range(9, 20)]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")))
    for path in [c for c in candidates if c]:
        try:
            done = subprocess.run([path, "-I", "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30)
            major, minor = (int(part) for part in done.stdout.split())
        except (OSError, ValueError, subprocess.TimeoutExpired):
            continue
        if (major, minor) >= (3, 9):
            found.setdefault((major, minor), path)
    return found


def python_stages():
    """`make test-pythons`: every reference node's platform checks, static ones included, under the oldest
    and the newest Python this machine has (--python)."""
    found = interpreters()
    chosen = sorted(set([min(found), max(found)])) if found else []
    for version in chosen:
        for contract, node in REFERENCE_NODES:
            yield "conformance %s under Python %d.%d" % (node, version[0], version[1]), [
                PY, "-m", "conformance", contract, node, "--python", found[version], "--jobs", "4"], summary_counts


def run_all(fast, selected=None, label=None):
    total = Counts()
    broken = []
    started = time.monotonic()
    for title, argv, reader in (selected if selected is not None else stages(fast)):
        # check-fast tells slow tests (the quick bench run) to stand aside.
        env = dict(os.environ, CONFORMANCE_CHECK_FAST="1") if fast else None
        if argv and isinstance(argv[0], list):
            status, out = _run_shards(title, argv, env=env)
        else:
            status, out = _run(title, argv, env=env)
        counts = reader(status, out)
        if counts.failed:
            broken.append(title)
        total.add(counts)
    print("\n==== %s in %.0f s%s" % (label or ("check-fast" if fast else "make test"), time.monotonic() - started,
                                    "; failing stages: " + ", ".join(broken) if broken else ""))
    print(total.line())
    return 1 if total.failed else 0


def print_help(makefile):
    print("Targets (make TARGET):")
    with open(os.path.join(ROOT, makefile), encoding="utf-8") as handle:
        for line in handle:
            match = re.match(r"^([a-z][a-z-]*):.*?## (.*)$", line)
            if match:
                print("  %-12s %s" % match.groups())
    return 0


def clean():
    """Caches, and the scratch of harness or bench runs that were killed."""
    import glob
    import tempfile
    for pattern in (os.path.join(tempfile.gettempdir(), "conformance-*"), "/dev/shm/conformance-bench-*"):
        for path in glob.glob(pattern):
            shutil.rmtree(path, ignore_errors=True)
    for top, dirs, _files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in list(dirs):
            if name == "__pycache__":
                shutil.rmtree(os.path.join(top, name), ignore_errors=True)
                dirs.remove(name)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["test"] and len(argv) <= 2:
        contract = argv[1] if len(argv) == 2 and argv[1] else None
        if contract is not None and contract not in REFERENCE_NODES_BY:
            print("usage: make test [CONTRACT=%s]" % "|".join(sorted(REFERENCE_NODES_BY)), file=sys.stderr)
            return 2
        if contract:
            os.environ["CONFORMANCE_CONTRACT"] = contract  # tests over every contract look at this one only
        return run_all(False, list(stages(False, contract)), label="make test" + (" CONTRACT=%s" % contract
                                                                                 if contract else ""))
    if argv[:1] == ["check-fast"]:
        return run_all(fast=True)
    if argv[:1] == ["test-pythons"]:
        selected = list(python_stages())
        if not selected:
            print("test-pythons: no Python 3.9 or newer found besides none at all", file=sys.stderr)
            return 1
        return run_all(False, selected, label="make test-pythons")
    if argv[:1] == ["help"]:
        return print_help(argv[1] if len(argv) > 1 else "Makefile")
    if argv[:1] == ["clean"]:
        return clean()
    if argv[:1] in (["conformance"], ["mutants"]) and len(argv) <= 3:
        rest = [a for a in argv[1:] if a]
        if argv[0] == "conformance" and len(rest) == 1:
            print("usage: python3 -m conformance.suite conformance [CONTRACT NODE]", file=sys.stderr)
            return 2
        return run_all(False, list(reference_stages(argv[0], *rest)), label="make " + argv[0])
    print("usage: python3 -m conformance.suite {test,check-fast,help [MAKEFILE],clean,"
          "conformance [CONTRACT NODE],mutants [CONTRACT]}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
