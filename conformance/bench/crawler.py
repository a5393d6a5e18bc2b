"""make bench-crawler: the crawler node's peak memory against source size, and its stop latency.

    python3 -m conformance.bench crawler                # about 2 minutes
    python3 -m conformance.bench crawler --quick        # the smoke run `make test` uses (~5 s)

Two figures the crawler contract promises and conformance only bounds loosely:

* **Peak RSS against source size** (CRAWLER-STREAM-1). The source is JSON lines
  padded with insignificant whitespace, so a source many times the result bound
  (MAX_CRAWLER_RESULT_BYTES) normalises to a small result and the run succeeds:
  what grows with the source is only what the node holds of it. The figure is
  `ru_maxrss` from `wait4`, which on Linux is the larger of the node's own peak
  and that of the children it reaped (the normaliser), so the child is counted.
  Wall time is the harness's, from starting the node to reaping it.
* **Stop latency** (CRAWLER-STOP-1, STOP-3): SIGTERM as PID 1 while the source
  is being read, and while the normaliser runs; time from the signal to the
  node's exit, and whether the cancelled bundle reached the store.

It reuses the crawler plane of the conformance checks, so what is measured is
the same run the checks judge. Runs alternate sizes so drift in the machine's
load spreads over all of them; medians are printed with their range. What
every bench shares (running and measuring a node, repetitions and medians,
stop trials, the tables, the command line, --json) is conformance/bench/core.py.
"""

import os

from conformance.bench import core
from conformance.bench.core import MiB, median_range, size_label
from conformance.planes import crawler_docs as docs
from conformance.planes.crawler import CrawlerPlane, GeneratedJsonl
from conformance.runner import HarnessError, capabilities
from conformance.timeouts import LONG_TIMEOUT_S, NODE_RUN_TIMEOUT_S

DEFAULT_NODE = os.path.join("nodes", "crawler_job.py")

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
PHASES = ("fetch", "child")
PHASE_TITLES = {"fetch": "the source read", "child": "the normaliser child"}
STOP_SOURCE_BYTES = 256 * MiB
STOP_AFTER_SOURCE_BYTES = 4 * MiB
STOP_CHILD = {"mode": "sleep", "seconds": 60}

# A run, or a node not gone after SIGTERM, this long is a harness or node
# fault, not a figure (conformance judges the stop's bound: CRAWLER-STOP-1).
RUN_TIMEOUT_S = LONG_TIMEOUT_S
TRIGGER_TIMEOUT_S = NODE_RUN_TIMEOUT_S  # the node reaching the phase a SIGTERM interrupts

# The fixed words of the report (the tests and README's Performance section rely on them).
MEMORY_HEADERS = ["source", "x result bound", "peak RSS MiB (node + child)", "wall s"]
STOP_HEADERS = ["SIGTERM during", "stop latency ms", "exit 143", "cancelled bundle stored"]


def memory_run(ctx, size):
    """One successful run over a generated source of `size` bytes: its record (core.run_node's)."""
    plane = CrawlerPlane(ctx, source=GeneratedJsonl(size), limits=LIMITS)
    try:
        result, record = core.run_node(plane, RUN_TIMEOUT_S)
        if result.exit_code != 0 or plane.stored_result() is None:
            raise HarnessError("bench: the run over %d MiB did not succeed: exit %s, stderr %r"
                               % (size // MiB, result.exit_code, result.stderr[:200]))
        return dict(record, size_bytes=size)
    finally:
        plane.close()


def stop_run(ctx, phase):
    """One SIGTERM in `phase` ("fetch" or "child"): latency, and whether the cancelled bundle landed."""
    if phase == "fetch":
        plane = CrawlerPlane(ctx, source=GeneratedJsonl(STOP_SOURCE_BYTES), limits=LIMITS)
        trigger = plane.site.bytes_sent(STOP_AFTER_SOURCE_BYTES)
    else:
        plane = CrawlerPlane(ctx, child=STOP_CHILD)
        trigger = plane.child.started()
    try:
        record, _result = core.stop_trial(plane, core.polled(trigger, plane), RUN_TIMEOUT_S,
                                          reach_timeout_s=TRIGGER_TIMEOUT_S)
        bundle = plane.stored_bundle()
        return dict(record, phase=phase,
                    bundle=bool(bundle and bundle.doc.get("failure_code") == "CRAWLER_CANCELLED"))
    finally:
        plane.close()


def _ms(summary):
    """A stop summary's latency as "median [min-max]" in ms, or "-"."""
    stat = None if not summary["exited"] else {
        "median": summary["median_s"], "min": summary["min_s"], "max": summary["max_s"]}
    return core.cell(stat, "%.0f", scale=1000.0, missing="-")


class Bench(core.ContractBench):
    """The crawler node alone: memory runs over growing sources, then stop trials."""

    DESCRIPTION = "Measure the crawler node: peak memory against source size, and stop latency."
    DEFAULT_NODE = DEFAULT_NODE
    REPS, QUICK_REPS, REPS_HELP = 3, 1, "runs per source size"
    TRIALS, QUICK_TRIALS, TRIALS_HELP = 10, 3, "SIGTERMs per phase"
    QUICK_HELP = "small sizes, one run each and 3 trials: a smoke test (~5 s)"
    SCHEMA = "conformance-bench-crawler/1"
    EXAMPLES = ("--quick", "--node my_job.py --json bench-crawler.json")

    @classmethod
    def from_options(cls, options):
        return cls(core.program(options.node), QUICK_SIZES if options.quick else FULL_SIZES,
                   options.reps, options.trials)

    def __init__(self, node, sizes, reps, trials):
        self.node, self.sizes, self.reps, self.trials = node, sizes, reps, trials
        self.runs, self.stop_runs = [], []

    def run(self):
        ctx = core.Context("conformance-bench-crawler-", argv=self.node.argv)
        try:
            for rep in core.repetitions(self.reps, "memory"):
                for size in core.alternating(self.sizes, rep):
                    self.runs.append(dict(memory_run(ctx, size), rep=rep))
            self.stop_runs += core.stop_trials([("the source read and the normaliser child", PHASES)],
                                               self.trials, lambda phase: stop_run(ctx, phase))
        finally:
            ctx.close()

    def figures(self):
        memory = {}
        for size in self.sizes:
            good = [r for r in self.runs if r["size_bytes"] == size]
            memory[size_label(size)] = {"size_bytes": size, "x_result_bound": size / docs.MAX_CRAWLER_RESULT_BYTES,
                                        "maxrss_mib": median_range([r["maxrss_bytes"] / MiB for r in good]),
                                        "elapsed_s": median_range([r["elapsed_s"] for r in good])}
        first, last = memory[size_label(self.sizes[0])], memory[size_label(self.sizes[-1])]
        stop = {}
        for phase in PHASES:
            trials = [r for r in self.stop_runs if r["phase"] == phase]
            stop[phase] = dict(core.stop_summary(trials, self.trials),
                               exit_143=sum(r["exit_code"] == 143 for r in trials),
                               bundles=sum(r["bundle"] for r in trials))
        return {"memory": memory, "growth_mib": core.median(last["maxrss_mib"]) - core.median(first["maxrss_mib"]),
                "stop": stop}

    def render(self, figures, wall_s):
        pid1 = bool(capabilities().pid1)
        out = ["crawler bench: %s%s, %.0f s" % (self.node.path, " as PID 1" if pid1 else " (PID 1 unavailable)",
                                                wall_s), ""]
        rows = []
        for size in self.sizes:
            m = figures["memory"][size_label(size)]
            rows.append(["%d MiB" % (size // MiB), "%.1f" % m["x_result_bound"],
                         core.cell(m["maxrss_mib"], "%.1f", missing="-"),
                         core.cell(m["elapsed_s"], "%.2f", missing="-")])
        out += core.markdown_table(MEMORY_HEADERS, rows)
        out += ["", "growth from %d MiB to %d MiB of source: %+.1f MiB of peak RSS"
                % (self.sizes[0] // MiB, self.sizes[-1] // MiB, figures["growth_mib"]), ""]
        rows = []
        for phase in PHASES:
            s = figures["stop"][phase]
            rows.append([PHASE_TITLES[phase], _ms(s), "%d/%d" % (s["exit_143"], s["trials"]),
                         "%d/%d" % (s["bundles"], s["trials"])])
        return out + core.markdown_table(STOP_HEADERS, rows)

    def options(self):
        return {"sizes_bytes": list(self.sizes), "stop_bound_s": RUN_TIMEOUT_S}

    def document(self):
        return {"runs": self.runs, "stop_trials": self.stop_runs}
