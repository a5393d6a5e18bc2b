"""Measure the crawler node: peak memory against source size, and stop latency.

    python3 -m conformance.bench_crawler [--node PATH] [--reps N] [--trials N] [--quick]

Two figures the crawler contract promises and conformance only bounds loosely:

* **Peak RSS against source size** (CRAWLER-STREAM-1). The source is JSON lines
  padded with insignificant whitespace, so a source many times the result bound
  (MAX_CRAWLER_RESULT_BYTES) normalises to a small result and the run succeeds:
  what grows with the source is only what the node holds of it. The figure is
  `ru_maxrss` from `wait4`, which on Linux is the larger of the node's own peak
  and that of the children it reaped (the normaliser), so the child is counted.
* **Stop latency** (CRAWLER-STOP-1, STOP-3): SIGTERM as PID 1 while the source
  is being read, and while the normaliser runs; time from the signal to the
  node's exit, and whether the cancelled bundle reached the store.

It reuses the crawler plane of the conformance checks, so what is measured is
the same run the checks judge. Runs alternate sizes so drift in the machine's
load spreads over all of them; medians are printed with their range.
"""

import argparse
import os
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time

from conformance.planes import crawler_docs as docs
from conformance.planes.crawler import CrawlerPlane, GeneratedJsonl
from conformance.runner import HarnessError, Runner, capabilities

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_NODE = os.path.join("nodes", "crawler_job.py")
MiB = 1 << 20

# Source sizes, as multiples of the result bound (8 MiB): 1x, 10x (the issue's
# "ten times larger than the result bound") and 32x.
FULL_SIZES = (docs.MAX_CRAWLER_RESULT_BYTES, 10 * docs.MAX_CRAWLER_RESULT_BYTES,
              32 * docs.MAX_CRAWLER_RESULT_BYTES)
QUICK_SIZES = (MiB, 10 * MiB)

# The request's limits for the memory runs: room for the biggest source.
LIMITS = {"max_source_bytes": 1 << 30, "max_normalized_bytes": docs.MAX_CRAWLER_RESULT_BYTES // 2,
          "max_rows": 1000000, "max_columns": 64}

# Stop trials: the source read is interrupted after this much of a big source
# was sent; the child phase uses a fake normaliser that sleeps.
STOP_SOURCE_BYTES = 256 * MiB
STOP_AFTER_SOURCE_BYTES = 4 * MiB
STOP_CHILD = {"mode": "sleep", "seconds": 60}

# A run that takes longer than this is a harness or node fault, not a figure.
RUN_TIMEOUT_S = 300.0
TRIGGER_TIMEOUT_S = 60.0


class BenchContext(object):
    """The little of a check's context the plane uses."""

    def __init__(self, node_argv):
        self.seed = 0
        self.rng = random.Random(0)
        self.node_argv = node_argv
        self.tmp = tempfile.mkdtemp(prefix="conformance-bench-crawler-")

    def tmpdir(self, name):
        path = os.path.join(self.tmp, name)
        os.makedirs(path, exist_ok=True)
        return path

    def note(self, text):
        pass

    def start_node(self, env, args=(), pid1=True, memory_limit_bytes=None):
        return Runner.start(self.node_argv + list(args), env, pid1=pid1, memory_limit_bytes=memory_limit_bytes)

    def fail(self, expected, actual, diagnosis=None):
        raise HarnessError("bench: expected %s, got %s" % (expected, actual))

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def memory_run(ctx, size, pid1):
    """One successful run over a generated source of `size` bytes: peak RSS and wall time."""
    plane = CrawlerPlane(ctx, source=GeneratedJsonl(size), limits=LIMITS)
    try:
        started = time.monotonic()
        result = plane.run(timeout=RUN_TIMEOUT_S, pid1=pid1)
        wall = time.monotonic() - started
        if result.exit_code != 0 or plane.stored_result() is None:
            raise HarnessError("bench: the run over %d MiB did not succeed: exit %s, stderr %r"
                               % (size // MiB, result.exit_code, result.stderr[:200]))
        return {"size": size, "rss": result.maxrss_bytes, "wall": wall}
    finally:
        plane.close()


def stop_run(ctx, phase, pid1):
    """One SIGTERM in `phase` ("fetch" or "child"): latency and whether the bundle landed."""
    if phase == "fetch":
        plane = CrawlerPlane(ctx, source=GeneratedJsonl(STOP_SOURCE_BYTES), limits=LIMITS)
        trigger = plane.site.bytes_sent(STOP_AFTER_SOURCE_BYTES)
    else:
        plane = CrawlerPlane(ctx, child=STOP_CHILD)
        trigger = plane.child.started()
    try:
        plane.start(pid1=pid1)
        plane.stop_when(trigger, signal.SIGTERM, timeout=TRIGGER_TIMEOUT_S, what="the %s phase" % phase)
        result = plane.wait(timeout=RUN_TIMEOUT_S)
        bundle = plane.stored_bundle()
        return {"phase": phase, "latency": result.stop_latency_s, "exit": result.exit_code,
                "bundle": bool(bundle and bundle.doc.get("failure_code") == "CRAWLER_CANCELLED")}
    finally:
        plane.close()


def median_range(values, scale=1.0, fmt="%.1f"):
    values = [v * scale for v in values if v is not None]
    if not values:
        return "-"
    return (fmt + " [" + fmt + "-" + fmt + "]") % (statistics.median(values), min(values), max(values))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m conformance.bench_crawler", description=__doc__.split("\n\n")[0])
    parser.add_argument("--node", default=DEFAULT_NODE, help="crawler node to measure (default %(default)s)")
    parser.add_argument("--reps", type=int, default=3, help="runs per source size (default %(default)s)")
    parser.add_argument("--trials", type=int, default=10, help="SIGTERMs per phase (default %(default)s)")
    parser.add_argument("--quick", action="store_true", help="small sizes and 3 trials: a smoke test (~15 s)")
    options = parser.parse_args(argv)
    sizes = QUICK_SIZES if options.quick else FULL_SIZES
    reps = 1 if options.quick else max(1, options.reps)
    trials = 3 if options.quick else max(1, options.trials)
    pid1 = bool(capabilities().pid1)
    node = os.path.abspath(options.node)
    ctx = BenchContext([sys.executable, node])
    started = time.monotonic()
    try:
        memory = []
        for rep in range(reps):
            for size in (sizes if rep % 2 == 0 else tuple(reversed(sizes))):
                log("memory: %d MiB source, run %d/%d" % (size // MiB, rep + 1, reps))
                memory.append(memory_run(ctx, size, pid1))
        stops = []
        for trial in range(trials):
            for phase in ("fetch", "child"):
                log("stop: %s, trial %d/%d" % (phase, trial + 1, trials))
                stops.append(stop_run(ctx, phase, pid1))
    finally:
        ctx.close()

    print("crawler bench: %s%s, %.0f s" % (options.node, " as PID 1" if pid1 else " (PID 1 unavailable)",
                                          time.monotonic() - started))
    print()
    print("| source | x result bound | peak RSS MiB (node + child) | wall s |")
    print("|---|---|---|---|")
    for size in sizes:
        runs = [r for r in memory if r["size"] == size]
        print("| %d MiB | %.1f | %s | %s |" % (size // MiB, size / docs.MAX_CRAWLER_RESULT_BYTES,
                                              median_range([r["rss"] for r in runs], 1.0 / MiB),
                                              median_range([r["wall"] for r in runs], 1.0, "%.2f")))
    small = statistics.median(r["rss"] for r in memory if r["size"] == sizes[0])
    large = statistics.median(r["rss"] for r in memory if r["size"] == sizes[-1])
    print()
    print("growth from %d MiB to %d MiB of source: %+.1f MiB of peak RSS"
          % (sizes[0] // MiB, sizes[-1] // MiB, (large - small) / MiB))
    print()
    print("| SIGTERM during | stop latency ms | exit 143 | cancelled bundle stored |")
    print("|---|---|---|---|")
    for phase in ("fetch", "child"):
        runs = [r for r in stops if r["phase"] == phase]
        print("| %s | %s | %d/%d | %d/%d |" % (
            "the source read" if phase == "fetch" else "the normaliser child",
            median_range([r["latency"] for r in runs], 1000.0, "%.0f"),
            sum(r["exit"] == 143 for r in runs), len(runs), sum(r["bundle"] for r in runs), len(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
