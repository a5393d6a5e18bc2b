"""The measuring core every contract's bench shares.

    python3 -m conformance.bench [CONTRACT] [--node PATH] [--quick] [--reps N] [--trials N] [--json FILE]

A contract's bench is one module of this package, named after the contract
(step.py, crawler.py), that defines `Bench`, a subclass of ContractBench:
what it runs, the figures it makes of the runs, its tables. dispatch() finds
it by that name; main() does the rest, the same way for every contract:

* **The command line**: --node, --quick, --reps, --trials, --json for every
  bench (defaults from the Bench's class attributes), plus the Bench's own
  options (add_arguments). Bad usage exits 2.
* **Running a node**: Program (a node file or a helper program, and its argv);
  Context (the little of a check's context a plane uses: scratch under one
  temporary directory, start_node through the harness's runner); run_node()
  (one run through the plane, as PID 1 when available: CPU and peak RSS of the
  whole process tree from the launcher's os.wait4, wall time from exec to
  exit, from the runner's RunResult, and this process's own CPU meanwhile: the
  fakes' threads and the runner's).
* **Repetitions and medians**: repetitions() (a progress line per repetition),
  alternating() (the order reversed every other repetition), median_range()
  and cell() ("median [min-max]").
* **Stop latency**: stop_trial() (SIGTERM once the phase under test began, a
  SIGKILL when the node is not gone within the bound), stop_trials() (phases
  one after another, their trials interleaved, a phase given up for a program
  after a few kills), stop_summary() (median, p95, max, what happened).
* **The report**: table() (aligned columns) and markdown_table(), the budget
  table (figure, budget, this run, verdict) when the Bench judges budgets, and
  the footer: the CPU other processes used meanwhile (a busy machine moves
  every figure) and the wall time.
* **The --json document**: schema, node, options, machine, wall_s, figures,
  budgets, and what the Bench adds (its raw runs).
* **The conformance run**: every bench but a --quick one also runs the
  contract's default conformance run of the node once, as a user runs it
  (`python3 -m conformance CONTRACT NODE`), and judges its wall time against
  CONFORMANCE_RUN_BUDGET_S beside how fast this machine starts an interpreter
  at that moment (the run is CPU-bound on node starts, so it follows that).

A new contract's bench: a module here with its Bench (the session worker's
would measure probe latency with stop_trial's kind of trigger and idle CPU with
conformance.lifecycle.measure_cpu), and one Makefile line
`$(PY) -m conformance.bench CONTRACT $(BENCH_ARGS)`.

Only numbers and names are ever written: never a program's output (it may
hold the store's credentials).
"""

import argparse
import importlib
import json
import math
import os
import pkgutil
import random
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from conformance.runner import HarnessError, Runner, capabilities, forked_nodes_cpu_s
from conformance.timeouts import POLL_INTERVAL_S, SHORT_TIMEOUT_S

PACKAGE = __name__.rsplit(".", 1)[0]
PROG = "python3 -m " + PACKAGE
DEFAULT_CONTRACT = "step"  # `python3 -m conformance.bench` alone: what `make bench` always ran
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONFORMANCE_RUN_TIMEOUT_S = 600.0  # far past any default run: a bound, not a budget
MiB = 1 << 20
GiB = 1 << 30
# One contract's default conformance run of its reference node, on 2 cores (README, Performance).
CONFORMANCE_RUN_BUDGET_S = 45.0
# The interpreter starts timed for the machine-speed figure beside it.
INTERPRETER_STARTS = 10


def log(text):
    """Progress, on stderr (stdout holds the report)."""
    sys.stderr.write("bench: %s\n" % text)
    sys.stderr.flush()


def size_label(size):
    if size >= GiB and size % GiB == 0:
        return "%d GiB" % (size // GiB)
    return "%d MiB" % (size // MiB)


# ---------------------------------------------------------------- CPU of this process and of the machine

def machine_busy_s():
    """CPU seconds all processes on the machine have spent so far (/proc/stat), or None."""
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = handle.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    user, nice, system = (int(x) for x in fields[1:4])  # processes' time: no idle, iowait, irq or steal
    return (user + nice + system) / float(os.sysconf("SC_CLK_TCK"))


def own_cpu_s():
    """CPU seconds of this process, every child it reaped, and every node the
    runner's fork server reaped (whose launchers are not this process's children)."""
    total = forked_nodes_cpu_s()
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def harness_cpu_s():
    """CPU seconds of this process alone: the fakes' threads, and the runner's."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class MachineLoad:
    """The bench's wall time, and the CPU the rest of the machine used meanwhile."""

    def __init__(self):
        self.started = time.monotonic()
        self.busy_before, self.own_before = machine_busy_s(), own_cpu_s()

    def finish(self):
        """(wall seconds, the --json document's "machine")."""
        wall_s = time.monotonic() - self.started
        busy_after, own_after = machine_busy_s(), own_cpu_s()
        caps = capabilities()
        other = None
        if self.busy_before is not None and busy_after is not None:
            other = round(max(0.0, (busy_after - self.busy_before) - (own_after - self.own_before)), 1)
        return wall_s, {"cpu_count": os.cpu_count(), "python": sys.version.split()[0],
                        "pid1": bool(caps.pid1), "cgroup": caps.cgroup.value or None,
                        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
                        "other_cpu_s": other}


def footer(machine, wall_s):
    """The report's last lines: how busy the machine was meanwhile, and the wall time."""
    out = []
    other = machine.get("other_cpu_s")
    if other is not None:
        cores = os.cpu_count() or 1
        out.append("meanwhile, other processes on this machine used %.0f CPU-s (%.0f%% of %d cores for %.0f s)"
                   % (other, 100.0 * other / (wall_s * cores), cores, wall_s))
    out.append("bench: finished in %.0f s" % wall_s)
    return out


# ---------------------------------------------------------------- programs, context, runs

class Program:
    """One thing to measure: a node, or a helper program (a floor, a store-alone client)."""

    def __init__(self, name, argv, kind, path=None):
        self.name, self.argv, self.kind, self.path = name, list(argv), kind, path

    def __repr__(self):
        return "Program(%r)" % self.name


def program(path, kind="node"):
    """The Program of a node file, found from the working directory or the repository.
    A missing file ends the bench (exit 1) with a message naming the path."""
    full = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    if not os.path.isfile(full):
        full = os.path.join(ROOT, path)
    if not os.path.isfile(full):
        raise SystemExit("%s: no such node file: %s" % (PROG, path))
    return Program(os.path.splitext(os.path.basename(path))[0], [sys.executable, full], kind, path=path)


class Context:
    """The little of a check's context a plane uses (as examples/demo.py does).

    Everything a plane writes goes under one temporary directory named
    `prefix`...; a plane's "<name>/store" directory under /dev/shm instead
    when shm_store and /dev/shm is writable, so the disk belongs to the
    programs under test. `argv` is the program a plane's start_node starts.
    """

    def __init__(self, prefix, shm_store=False, argv=None):
        self.seed = 0
        self.rng = random.Random(0)
        self.argv = list(argv or [])
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.store_tmp = None
        if shm_store and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
            self.store_tmp = tempfile.mkdtemp(prefix=prefix + "store-", dir="/dev/shm")

    def tmpdir(self, name):
        base = self.store_tmp if (self.store_tmp and name.endswith("/store")) else self.tmp
        path = os.path.join(base, name)
        os.makedirs(path, exist_ok=True)
        return path

    def note(self, text):
        pass

    def start_node(self, env, args=(), pid1=True, memory_limit_bytes=None):
        return Runner.start(self.argv + list(args), env, pid1=pid1, memory_limit_bytes=memory_limit_bytes)

    def fail(self, expected, actual, diagnosis=None):
        raise HarnessError("bench: expected %s, got %s" % (expected, actual))

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.store_tmp:
            shutil.rmtree(self.store_tmp, ignore_errors=True)


def run_node(plane, timeout_s, pid1=True, memory_limit_bytes=None):
    """Start the plane's node and wait for its exit (a SIGKILL after timeout_s).

    Returns (RunResult, record): the record holds numbers only: exit_code,
    cpu_s and maxrss_bytes (the node's whole process tree, from the launcher's
    os.wait4), wall_s (exec to exit), elapsed_s (this process's start to reap),
    harness_cpu_s (this process's own CPU meanwhile: the fakes and the runner),
    pid1, timed_out, oom_killed and memory_peak_bytes (a memory cgroup's peak)."""
    before, started = harness_cpu_s(), time.monotonic()
    result = plane.run(timeout=timeout_s, pid1=pid1, memory_limit_bytes=memory_limit_bytes)
    elapsed_s, harness_s = time.monotonic() - started, harness_cpu_s() - before
    return result, {"exit_code": result.exit_code, "cpu_s": result.cpu_s, "maxrss_bytes": result.maxrss_bytes,
                    "wall_s": round(result.wall_s, 4), "elapsed_s": round(elapsed_s, 4),
                    "harness_cpu_s": round(harness_s, 4), "pid1": result.is_pid1, "timed_out": result.timed_out,
                    "oom_killed": result.oom_killed, "memory_peak_bytes": result.memory_peak_bytes}


# ---------------------------------------------------------------- repetitions and statistics

def repetitions(reps, what):
    """range(reps), with a progress line after each repetition."""
    for rep in range(reps):
        started = time.monotonic()
        yield rep
        log("%s: repetition %d/%d in %.0f s" % (what, rep + 1, reps, time.monotonic() - started))


def alternating(items, rep):
    """items in order on even repetitions, reversed on odd ones: drift in the
    machine's load then spreads over all of them."""
    return tuple(items) if rep % 2 == 0 else tuple(reversed(items))


def median_range(values):
    """{"median", "min", "max", "n"} of the values that are not None, or None."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def p95(values):
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def median(stat):
    """The median of a median_range(), or None."""
    return None if not stat else stat["median"]


def cell(stat, fmt, scale=1.0, missing="n/a"):
    """A median_range() as "median [min-max]", each value times scale, in fmt."""
    if not stat:
        return missing
    return ("%s [%s-%s]" % (fmt, fmt, fmt)) % (stat["median"] * scale, stat["min"] * scale, stat["max"] * scale)


# ---------------------------------------------------------------- stop latency

def polled(condition, plane):
    """A `reached` for stop_trial from a predicate polled every POLL_INTERVAL_S
    (a fake's, such as a crawler site's bytes_sent(n)); it gives up when the
    node has exited."""
    def reached(timeout_s):
        deadline = time.monotonic() + timeout_s
        while not condition():
            if not plane.proc.running() or time.monotonic() > deadline:
                return condition()
            time.sleep(POLL_INTERVAL_S)
        return True
    return reached


def stop_trial(plane, reached, bound_s, settle_s=0.0, reach_timeout_s=SHORT_TIMEOUT_S):
    """One SIGTERM to the plane's node, as PID 1, in the phase `reached` waits for.

    reached(timeout_s) is true once the node is in the phase (it waits at most
    timeout_s); settle_s later the node gets SIGTERM, and it is SIGKILLed when
    not gone bound_s after. Returns (record, RunResult or None): latency_s
    (signal to exit, None without an exit within the bound), exit_code, pid1,
    killed, and a verdict: "exit N", "no exit within B s", "exited before the
    signal" or "phase not reached within T s" (then no RunResult). The caller
    adds what its contract says the stop must leave behind."""
    record = {"latency_s": None, "exit_code": None, "killed": False, "verdict": None}
    proc = plane.start(pid1=True)
    record["pid1"] = proc.is_pid1
    if not reached(reach_timeout_s):
        plane.wait(timeout=0)
        record["verdict"] = "phase not reached within %.0f s" % reach_timeout_s
        return record, None
    time.sleep(settle_s)
    if not proc.signal(signal.SIGTERM):
        result = plane.wait(timeout=SHORT_TIMEOUT_S)
        record.update(exit_code=result.exit_code, verdict="exited before the signal")
        return record, result
    result = plane.wait(timeout=bound_s)
    if result.timed_out:
        record.update(killed=True, verdict="no exit within %g s" % bound_s)
        return record, result
    record.update(exit_code=result.exit_code, latency_s=round(result.stop_latency_s, 4),
                  verdict="exit %s" % result.exit_code)
    return record, result


def stop_trials(groups, trials, run_one, give_up_after=None):
    """Every group's trials, one group after another: [record].

    groups: [(label, [case])]. Within a group the trials go round its cases
    (trial 1 of each case, then trial 2 of each...), so drift hits all of them;
    run_one(case) returns one stop_trial record. A case killed give_up_after
    times (no exit within the bound) is not tried again."""
    records = []
    for label, cases in groups:
        started = time.monotonic()
        kills = [0] * len(cases)
        for trial in range(trials):
            for index, case in enumerate(cases):
                if give_up_after is not None and kills[index] >= give_up_after:
                    continue
                record = run_one(case)
                record["trial"] = trial
                records.append(record)
                kills[index] += 1 if record["killed"] else 0
        log("stop latency: %s, %d trial(s) in %.0f s" % (label, trials, time.monotonic() - started))
    return records


def stop_summary(records, trials):
    """One case's stop trials: trials, exited, median_s, p95_s, min_s, max_s,
    verdicts ({verdict: count}) and gave_up (fewer trials run than asked)."""
    latencies = [r["latency_s"] for r in records if r["latency_s"] is not None]
    verdicts = {}
    for r in records:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    return {"trials": len(records), "exited": len(latencies),
            "median_s": statistics.median(latencies) if latencies else None,
            "p95_s": p95(latencies) if latencies else None,
            "min_s": min(latencies) if latencies else None,
            "max_s": max(latencies) if latencies else None,
            "verdicts": verdicts, "gave_up": len(records) < trials}


# ---------------------------------------------------------------- the report

BUDGET_HEADERS = ["figure", "budget", "this run", "verdict"]


def table(headers, rows):
    """Aligned columns under a rule of dashes: the lines of one table."""
    widths = [max(len(str(r[i])) for r in [headers] + rows) for i in range(len(headers))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(headers, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    return lines


def markdown_table(headers, rows):
    """The same table as Markdown, to paste into a document."""
    lines = ["| %s |" % " | ".join(headers), "|%s|" % "|".join("---" for _ in headers)]
    return lines + ["| %s |" % " | ".join(str(c) for c in row) for row in rows]


def interpreter_start_ms(starts=INTERPRETER_STARTS):
    """Median milliseconds of `python -c pass` with this interpreter, now: how fast the machine is."""
    times = []
    for _ in range(starts):
        began = time.monotonic()
        subprocess.run([sys.executable, "-c", "pass"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        times.append((time.monotonic() - began) * 1000.0)
    return statistics.median(times)


def conformance_run(contract, node, extra=()):
    """One default conformance run of a node (a Program), timed from outside as a user waits for
    it: {wall_s, checks, node_starts, harness_cpu_s, nodes_cpu_s, passed, failed, exit,
    interpreter_start_ms}; wall_s None when it did not finish within CONFORMANCE_RUN_TIMEOUT_S or
    left no report. Only the numbers of its --json report are read, never its output."""
    with tempfile.TemporaryDirectory(prefix="bench-conformance-") as tmp:
        report = os.path.join(tmp, "report.json")
        options = ["--json", report] + list(extra)
        argv = [sys.executable, "-m", PACKAGE.rsplit(".", 1)[0], contract]
        if len(node.argv) == 2 and node.argv[0] == sys.executable and node.argv[1].endswith(".py"):
            argv += [node.argv[1]] + options  # a file, as a user names it: the static checks run too
        else:
            argv += options + ["--"] + node.argv
        began = time.monotonic()
        try:
            done = subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=CONFORMANCE_RUN_TIMEOUT_S)
            exit_status = done.returncode
        except subprocess.TimeoutExpired:
            exit_status = None
        wall_s = time.monotonic() - began
        try:
            with open(report, encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, ValueError):
            document = None
    run = {"exit": exit_status, "interpreter_start_ms": round(interpreter_start_ms(), 1), "wall_s": None}
    if exit_status is not None and isinstance(document, dict):
        summary, cpu = document.get("summary") or {}, document.get("cpu_s") or {}
        checks = [c for c in document.get("checks") or [] if isinstance(c, dict)]
        run.update(wall_s=round(wall_s, 1), checks=len(checks), passed=summary.get("passed"),
                   failed=summary.get("failed"), node_starts=sum(c.get("node_starts") or 0 for c in checks),
                   harness_cpu_s=cpu.get("harness"), nodes_cpu_s=cpu.get("nodes"))
    return run


def conformance_budget(contract, run, cores=None):
    """The budget row of a conformance_run(): (figure, budget, this run, met)."""
    cores = cores or os.cpu_count() or 1
    figure = "default conformance run (python3 -m conformance %s NODE), %d cores" % (contract, cores)
    budget = "<= %.0f s on 2 cores" % CONFORMANCE_RUN_BUDGET_S
    if run.get("wall_s") is None:
        return figure, budget, "did not finish (exit %s)" % run.get("exit"), False
    got = "%.1f s (an interpreter starts in %.0f ms)" % (run["wall_s"], run["interpreter_start_ms"])
    return figure, budget, got, run["wall_s"] <= CONFORMANCE_RUN_BUDGET_S


def budget_table(budgets):
    """[(figure, budget, this run, met)] as a table; met None is "n/a" (not measured, or --quick)."""
    return table(BUDGET_HEADERS, [[what, budget, got, "n/a" if ok is None else ("met" if ok else "NOT MET")]
                                  for what, budget, got, ok in budgets])


# ---------------------------------------------------------------- a contract's bench

class ContractBench:
    """What a contract's bench defines; main() runs it.

    Class attributes: DESCRIPTION (--help's first line), DEFAULT_NODE, the
    repetitions and stop trials (REPS, QUICK_REPS, REPS_HELP, TRIALS,
    QUICK_TRIALS, TRIALS_HELP), QUICK_HELP, SCHEMA (the --json document's),
    BUDGETS_TITLE (the budget table's title; without one, the table holds only the
    conformance run's row), JUDGES_CONFORMANCE_RUN (False: no conformance run, for a
    bench whose node is not a reference node). An instance has `node` (a Program)
    once made by from_options.
    """

    DESCRIPTION = ""
    DEFAULT_NODE = None
    REPS, QUICK_REPS, REPS_HELP = 1, 1, "repetitions"
    TRIALS, QUICK_TRIALS, TRIALS_HELP = 1, 1, "stop trials per phase"
    QUICK_HELP = "small sizes, few repetitions and trials: a smoke run"
    SCHEMA = None
    BUDGETS_TITLE = None
    JUDGES_CONFORMANCE_RUN = True
    EXAMPLES = ()  # argument strings shown in --help

    node = None

    @classmethod
    def contract(cls):
        """The contract's name: the module's (conformance.bench.step -> step)."""
        return cls.__module__.rsplit(".", 1)[-1]

    @classmethod
    def add_arguments(cls, parser):
        """Options of this bench beyond the common ones."""

    @classmethod
    def from_options(cls, options):
        """The bench for parsed options (options.reps and .trials resolved)."""
        raise NotImplementedError

    def run(self):
        raise NotImplementedError

    def figures(self):
        """Every figure of the run, as the --json document's "figures"."""
        return {}

    def budgets(self, figures, wall_s):
        """[(figure, budget, this run, met)] judged on this run (met None: not judged)."""
        return []

    def render(self, figures, wall_s):
        """The report's lines before the budget table and the footer."""
        raise NotImplementedError

    def options(self):
        """The --json document's "options" beyond reps, trials and quick."""
        return {}

    def document(self):
        """Keys the --json document adds (raw runs, say)."""
        return {}

    def exit_status(self, figures):
        """0 when the bench measured (whatever the figures), 1 when it could not."""
        return 0


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write("%s: error: %s\n" % (self.prog, message))
        sys.exit(2)


def build_parser(bench_class):
    prog = "%s %s" % (PROG, bench_class.contract())
    examples = ["%s%s" % (prog, " " + e if e else "") for e in ("",) + tuple(bench_class.EXAMPLES)]
    epilog = "examples:\n  %s\n\nbenches: %s (`%s` alone: %s)" % (
        "\n  ".join(examples), ", ".join(sorted(contracts())), PROG, DEFAULT_CONTRACT)
    parser = _Parser(prog=prog, description=bench_class.DESCRIPTION, epilog=epilog,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--node", metavar="PATH", default=bench_class.DEFAULT_NODE,
                        help="node to measure (default %(default)s)")
    bench_class.add_arguments(parser)
    parser.add_argument("--reps", metavar="N", type=int, help="%s (default %d; %d with --quick)" % (
        bench_class.REPS_HELP, bench_class.REPS, bench_class.QUICK_REPS))
    parser.add_argument("--trials", metavar="N", type=int, help="%s (default %d; %d with --quick)" % (
        bench_class.TRIALS_HELP, bench_class.TRIALS, bench_class.QUICK_TRIALS))
    parser.add_argument("--quick", action="store_true", help=bench_class.QUICK_HELP)
    parser.add_argument("--json", metavar="FILE", help="also write every figure and raw run to FILE")
    return parser


def main(bench_class, argv=None):
    """Run one contract's bench: the report on stdout, progress on stderr, --json FILE.
    Exit status: the bench's (0 measured, 1 could not), 2 on bad usage."""
    parser = build_parser(bench_class)
    options = parser.parse_args(argv)
    for name in ("reps", "trials"):
        value = getattr(options, name)
        if value is not None and value < 1:
            parser.error("--%s must be at least 1" % name)
    options.reps = options.reps or (bench_class.QUICK_REPS if options.quick else bench_class.REPS)
    options.trials = options.trials or (bench_class.QUICK_TRIALS if options.quick else bench_class.TRIALS)
    load = MachineLoad()
    bench = bench_class.from_options(options)
    bench.run()
    run = None
    if bench.JUDGES_CONFORMANCE_RUN and not options.quick:
        log("the default conformance run of %s" % bench.node.name)
        run = conformance_run(bench.contract(), bench.node)
    wall_s, machine = load.finish()
    figures = bench.figures()
    budgets = bench.budgets(figures, wall_s)
    if run is not None:
        figures["conformance_run"] = run
        budgets.append(conformance_budget(bench.contract(), run))
    lines = list(bench.render(figures, wall_s))
    if budgets:
        title = bench.BUDGETS_TITLE or "Budgets of the %s bench" % bench.contract()
        lines += ["", "%s, judged for %s" % (title, bench.node.name)] + budget_table(budgets)
    lines += [""] + footer(machine, wall_s)
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    if options.json:
        document = {"schema": bench.SCHEMA, "node": bench.node.path,
                    "options": dict(reps=options.reps, trials=options.trials, quick=options.quick, **bench.options()),
                    "machine": machine, "wall_s": round(wall_s, 1), "figures": figures}
        if budgets:
            document["budgets"] = [{"figure": w, "budget": b, "this_run": g, "met": ok} for w, b, g, ok in budgets]
        document.update(bench.document())
        with open(options.json, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2, sort_keys=True)
            handle.write("\n")
    return bench.exit_status(figures)


# ---------------------------------------------------------------- python3 -m conformance.bench CONTRACT

def bench_class(name):
    """The Bench of the module `name` of this package, or None when it has none."""
    if not name.isidentifier() or name.startswith("_") or name == "core":
        return None
    try:
        module = importlib.import_module("%s.%s" % (PACKAGE, name))
    except ImportError as exc:
        if exc.name == "%s.%s" % (PACKAGE, name):
            return None
        raise
    found = getattr(module, "Bench", None)
    return found if isinstance(found, type) and issubclass(found, ContractBench) else None


def contracts():
    """The names of every contract bench in this package."""
    here = os.path.dirname(os.path.abspath(__file__))
    return [name for _, name, is_package in pkgutil.iter_modules([here])
            if not is_package and bench_class(name) is not None]


def dispatch(argv=None):
    """`python3 -m conformance.bench [CONTRACT] [OPTIONS]`: CONTRACT defaults to step."""
    argv = list(sys.argv[1:] if argv is None else argv)
    name = DEFAULT_CONTRACT
    if argv and not argv[0].startswith("-"):
        name = argv.pop(0)
    found = bench_class(name)
    if found is None:
        sys.stderr.write("usage: %s [CONTRACT] [OPTIONS]\n%s: error: no bench for contract %r (benches: %s)\n"
                         % (PROG, PROG, name, ", ".join(sorted(contracts()))))
        return 2
    return main(found, argv)
