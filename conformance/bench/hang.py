"""The worst case of a run: a node that hangs in every phase and ignores every signal.

    python3 -m conformance.bench.hang [CONTRACT ...] [--jobs N] [--bound SECONDS]

Runs `python3 -m conformance CONTRACT NODE` (every public contract by
default), at the default --jobs unless told, against a node that blocks
SIGTERM, SIGINT and SIGHUP and sleeps forever, and prints each run's wall
time beside the bound (180 s: the worst case a user waits for a verdict at
the default). Without the hang breaker (conformance/timeouts.py) such a run
waits every timeout of every check in full: most of an hour. Exit 1 when a
run took longer than the bound, passed a check it should have failed (only
the static checks that read the file may pass) or met a harness error.

It is not part of `make test` (two and a half minutes per contract, spent
mostly waiting); run it after changing a timeout, a plane's waits or a
check's loop: `make bench-hang`.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from conformance import checks

BOUND_S = 180.0
HANGING_NODE = '''"""A node that hangs in every phase and ignores every signal."""
import signal
import time

for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(signum, signal.SIG_IGN)
while True:
    time.sleep(3600)
'''
# Checks a hanging node may pass: the ones that read the file without running it.
MAY_PASS = ("node.stdlib",)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(contract, node, jobs=None):
    """(wall seconds, the JSON report) of one run of the contract against node."""
    with tempfile.TemporaryDirectory(prefix="conformance-hang-") as work:
        report = os.path.join(work, "report.json")
        argv = [sys.executable, "-m", "conformance", contract, node, "--json", report]
        if jobs:
            argv += ["--jobs", str(jobs)]
        started = time.monotonic()
        subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=3 * BOUND_S)
        wall = time.monotonic() - started
        with open(report, encoding="utf-8") as handle:
            return wall, json.load(handle)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m conformance.bench.hang", description=__doc__.split("\n")[0])
    parser.add_argument("contracts", nargs="*", metavar="CONTRACT", help="default: every public contract")
    parser.add_argument("--jobs", type=int, help="passed on (default: the harness's default)")
    parser.add_argument("--bound", type=float, default=BOUND_S, help="seconds a run may take (default %(default)s)")
    options = parser.parse_args(argv)
    names = options.contracts or checks.contracts()
    bad = 0
    with tempfile.TemporaryDirectory(prefix="conformance-hang-node-") as work:
        node = os.path.join(work, "hanging_node.py")
        with open(node, "w", encoding="utf-8") as handle:
            handle.write(HANGING_NODE)
        print("%-10s %8s %7s %7s %7s %7s  %s" % ("contract", "wall s", "checks", "failed", "unjudged", "passed",
                                               "verdict"))
        for name in names:
            wall, report = run(name, node, options.jobs)
            verdicts = [c["verdict"] for c in report["checks"]]
            passed = [c["id"] for c in report["checks"] if c["verdict"] == "PASS" and c["id"] not in MAY_PASS]
            unjudged = sum(1 for c in report["checks"] if (c.get("reason") or "").startswith("not judged"))
            problems = []
            if wall > options.bound:
                problems.append("over the %.0f s bound" % options.bound)
            if passed:
                problems.append("passed " + ", ".join(passed))
            errors = [c["id"] for c in report["checks"] if c["verdict"] == "ERROR"]
            if errors:
                problems.append("harness errors in " + ", ".join(errors))
            bad += bool(problems)
            print("%-10s %8.1f %7d %7d %7d %7d  %s" % (
                name, wall, len(verdicts), sum(v in ("FAIL", "NON-STRICT", "ERROR") for v in verdicts), unjudged,
                len(passed), "; ".join(problems) or "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
