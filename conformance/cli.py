"""Command line: python3 -m conformance CONTRACT NODE [options].

NODE is a Python file (run with this interpreter) or, after ``--``, any
command. Exit status: 0 when every required check passed, 1 when one failed
(or the harness failed), 2 on bad usage.

Order of a run: the static checks (`conformance.static`, section NODE) are
started first, then the contract's checks (`conformance.checks.<contract>`),
all in one thread pool of ``--jobs`` workers; the report lists them in that
order whatever order they finished in. A node that hangs is bounded by the
breaker in `conformance.timeouts`: after it hung in three checks, later
waits are short and the checks they cut are reported as not judged.
"""

import argparse
import concurrent.futures
import fnmatch
import os
import signal
import sys
import threading
import time
import traceback

import conformance as _conformance
from conformance import checks as _checks
from conformance import report as _report
from conformance import runner as _runner
from conformance import schedule as _schedule
from conformance import static as _static
from conformance import timeouts as _timeouts
from conformance.checks import ERROR, FAIL, NON_STRICT, NOT_JUDGED, PASS, SKIP

DESCRIPTION = "Run every check of one contract against a node and report clause by clause."


def epilog():
    """The examples, written the way this harness was started (conformance.LAUNCHER)."""
    prog = _conformance.launcher_text()
    lines = ["examples:",
             "  %s step my_node.py" % prog,
             "  %s step my_node.py --only 'stop.*' -v" % prog,
             "  %s step --list" % prog,
             "  %s step --jobs 4 -- python3 my_node.py" % prog]
    if tuple(_conformance.LAUNCHER) == ("python3", "-m", "conformance"):   # a checkout has the reference nodes
        lines.append("  %s step nodes/hello_node.py --reference    # the example work too" % prog)
    lines += ["", "exit status: 0 every required check passed and was judged, 1 one failed or was not judged,",
              "2 bad usage, 130/143 interrupted by SIGINT/SIGTERM (the reports hold what finished)"]
    return "\n".join(lines)

# With --repeat, the verdict reported for a check whose runs disagree: the
# first of these that occurred.
_WORST_FIRST = (FAIL, ERROR, NOT_JUDGED, NON_STRICT, PASS, SKIP)


class UsageError(Exception):
    """Bad command line; exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def build_parser():
    parser = _Parser(prog=_conformance.launcher_text(), description=DESCRIPTION, epilog=epilog(),
                     formatter_class=argparse.RawDescriptionHelpFormatter,
                     usage="%(prog)s CONTRACT NODE [options]\n       %(prog)s CONTRACT [options] -- COMMAND [ARG ...]")
    parser.add_argument("contract", metavar="CONTRACT", help="contract name (%s)" % (", ".join(_checks.contracts()) or "none installed"))
    parser.add_argument("node", metavar="NODE", nargs="?", help="the node: a Python file (or `-- COMMAND ...`)")
    parser.add_argument("--version", action="version", version=versions_text(),
                        help="print the harness's version and each contract's, and exit")
    parser.add_argument("--list", action="store_true", help="list the checks (after --only) and exit")
    parser.add_argument("--only", metavar="ID[,ID...]", action="append", default=[],
                        help="run only checks whose ID or cited clause ID matches one of these globs")
    parser.add_argument("--strict", action="store_true", help="a SHOULD clause not met is a failure")
    parser.add_argument("--reference", action="store_true",
                        help="also judge the reference node's example work (what its [EDIT] sections do); "
                             "for the reference nodes, not for your own")
    parser.add_argument("--deploy", metavar="NAME=VALUE", action="append", default=[],
                        help="judge the node with another value of one of the contract's deployment constants "
                             "(values the upstream never defines, set in the node's section 2; an unknown NAME "
                             "lists the contract's)")
    parser.add_argument("--python", metavar="PATH",
                        help="run the node file with this interpreter (3.9 or newer) instead of the harness's own; "
                             "every check runs, the static ones included, and the reports name it")
    parser.add_argument("--jobs", metavar="N", type=_positive, default=None,
                        help="run N checks in parallel (default: three times the CPUs this process may use, "
                             "at most %d, and more while those CPUs idle; the header says how many)"
                             % MAX_DEFAULT_JOBS)
    parser.add_argument("--repeat", metavar="N", type=_positive, default=1,
                        help="run each check N times and label it stable or flaky")
    parser.add_argument("--seed", metavar="N", type=int, default=0, help="seed of every fault schedule (default 0)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show every check's transcript")
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE")
    parser.add_argument("--json", metavar="FILE", help="also write a JSON report to FILE")
    parser.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report to FILE")
    parser.add_argument("--no-pid1", dest="pid1", action="store_false",
                        help="never run the node as PID 1 (checks that need it are skipped)")
    parser.add_argument("--full-waits", action="store_true",
                        help="wait every timeout in full even once the node has hung in three checks "
                             "(by default later waits are cut to %.0f s and what they cut is not judged)"
                        % _timeouts.HUNG_WAIT_S)
    return parser


# Most of a check is waiting for the node and the fakes, so twice as many
# checks as CPUs keeps the CPUs busy; past that the node starts (about 0.15
# CPU-s each) compete and a run gets slower (measured on 2 cores: the step
# run 109 s at 1 job, about 50 at 4).
MAX_DEFAULT_JOBS = 8
# How far past the default --jobs the governor may go while the CPUs idle. A run
# starts its longest checks first (schedule.order), and most of those wait: at
# twice the floor, the first 10 s of a session run kept the 2 cores 40 to 50 %
# busy; at four times, 55 to 75 %, and the run ended about 2 s sooner (2026-12-05).
IDLE_CEILING_FACTOR = 4


def jobs_text(options):
    """`4`, or `4 to 8` when more checks may start while the CPUs idle."""
    ceiling = getattr(options, "jobs_ceiling", None) or options.jobs
    return "%d" % options.jobs if ceiling <= options.jobs else "%d to %d" % (options.jobs, ceiling)


def default_jobs():
    """Three checks per CPU: most checks wait (a node's poll interval, a deadline) more than they
    compute. Measured on 2 cores (2026-12-05): twice the CPUs left a third of the CPU time idle
    (session 51 s, scan 45 to 49 s, crawler 47 s); three times, 40 to 44 s, every check passing."""
    try:
        cpus = len(os.sched_getaffinity(0))  # a container's CPU set, not the host's
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_DEFAULT_JOBS, 3 * cpus))


def versions_text():
    """`conformance 2026.12.1` and one line per public contract with its document's version."""
    from conformance import __version__
    lines = ["conformance %s" % __version__]
    for name in _checks.contracts():
        lines.append("  contract %s version %s" % (name, _report.contract_version(name) or "unknown"))
    return "\n".join(lines)


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number" % text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def parse(argv):
    """(options, NodeSpec or None); raises UsageError."""
    command = None
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
        if not command:
            raise UsageError("`--` must be followed by the command that runs the node")
    options = build_parser().parse_args(argv)
    known = _checks.contracts(include_private=True)
    if options.contract not in known:
        raise UsageError("unknown contract %r (known: %s)" % (options.contract, ", ".join(_checks.contracts())))
    if command is not None and options.node is not None:
        raise UsageError("give NODE either as a file or after `--`, not both")
    if options.python is not None:
        if command is not None:
            raise UsageError("--python runs a node file: give NODE as a file, not after `--`")
        options.python_version = interpreter_version(options.python)
    node = None
    if command is not None:
        node = _checks.NodeSpec.from_command(command)
    elif options.node is not None:
        if not os.path.isfile(options.node):
            raise UsageError("node file not found: %s" % options.node)
        if not options.node.endswith(".py") and not os.access(options.node, os.X_OK):
            raise UsageError("%s is neither a .py file nor executable; use `-- COMMAND` to say how to run it"
                             % options.node)
        node = _checks.NodeSpec.from_path(options.node, python=options.python)
    elif not options.list:
        raise UsageError("missing NODE (a Python file, or `-- COMMAND ...`)")
    # An explicit --jobs is a fixed pool; by default more checks start while the CPUs idle (schedule.Governor).
    options.jobs_ceiling = options.jobs
    if options.jobs is None:
        options.jobs = default_jobs()
        options.jobs_ceiling = IDLE_CEILING_FACTOR * options.jobs
    options.only = [p.strip() for item in options.only for p in item.split(",") if p.strip()]
    check_report_paths(options)
    if options.deploy:
        deployment = _checks.deployment(options.contract)
        if deployment is None:
            raise UsageError("contract %s has no deployment constants: --deploy does not apply" % options.contract)
        try:
            deployment.set(options.deploy)
        except ValueError as problem:
            raise UsageError(str(problem))
    return options, node


def interpreter_version(python):
    """The version ("3.9.18") of the interpreter at `python`; UsageError when it cannot run or is older than 3.9."""
    import subprocess
    if os.sep not in python:
        import shutil
        python = shutil.which(python) or python
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise UsageError("--python %s: no executable file there" % python)
    try:
        done = subprocess.run([python, "-I", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as problem:
        raise UsageError("--python %s could not be run: %s" % (python, problem))
    version = done.stdout.decode("ascii", "replace").strip()
    parts = version.split(".")
    if done.returncode != 0 or len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise UsageError("--python %s is not a Python interpreter that runs here" % python)
    if (int(parts[0]), int(parts[1])) < (3, 9):
        raise UsageError("--python %s is Python %s; the nodes need 3.9 or newer" % (python, version))
    return version


def node_interpreter(options, node):
    """`/path/python (Python 3.9.18)` for a node file; how a command node says it is run otherwise."""
    if node.path is None:
        return "the command's own (%s)" % node.argv[0]
    if getattr(options, "python", None):
        return "%s (Python %s)" % (node.argv[0], options.python_version)
    return "%s (Python %s, the harness's own)" % (sys.executable, "%d.%d.%d" % sys.version_info[:3])


def select(all_checks, patterns):
    """The checks matching any glob (against the check ID or a clause ID)."""
    if not patterns:
        return list(all_checks)
    chosen = []
    for item in all_checks:
        names = [item.id] + list(item.clauses)
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns for name in names):
            chosen.append(item)
    return chosen


def run_repeated(item, node, options):
    """Run one check --repeat times; one CheckResult, labelled stable/flaky when repeated."""
    results = [_checks.run_check(item, node, seed=options.seed, verbose=options.verbose,
                                 strict=options.strict, pid1=options.pid1) for _ in range(options.repeat)]
    verdicts = [r.verdict for r in results]
    worst = next(v for v in _WORST_FIRST if v in verdicts)
    chosen = next(r for r in results if r.verdict == worst)
    chosen.runs = verdicts
    if options.repeat > 1:
        chosen.stability = "stable" if len(set(verdicts)) == 1 else "flaky"
        chosen.duration_s = sum(r.duration_s for r in results) / len(results)
    return chosen


class Interrupted(Exception):
    """SIGINT or SIGTERM arrived during a run; `finished` holds the results of the checks done by then."""

    def __init__(self, signum, finished=()):
        super().__init__("interrupted by %s" % signal.Signals(signum).name)
        self.signum = signum
        self.finished = list(finished)


# After an interrupt, how long the checks under way get to end once their
# nodes are killed, before the harness leaves without them.
INTERRUPT_GRACE_S = 5.0

# Set by the signal handler: a check that ends after it ended because its node
# was killed, so it is neither recorded nor shown.
_stopping = threading.Event()


def run_all(selected, node, options, progress=None):
    """Every check in one pool of options.jobs, the longest expected first (conformance/schedule.py);
    results in selection order.

    Raises Interrupted (from the signal handler `main` installs) with the
    results finished before the signal: a check still under way when its
    node is killed proves nothing, so none finished later is kept.
    """
    ordered = _schedule.order(selected)
    results = {}
    lock = threading.Lock()
    # Hangs counted in an earlier run (a test's, say) do not shorten this one.
    _timeouts.reset_breaker(enabled=not getattr(options, "full_waits", False))

    def one(item):
        result = run_repeated(item, node, options)
        with lock:
            if _stopping.is_set():
                return result
            results[item.id] = result
            if progress:
                try:
                    progress(len(results), len(selected), result)
                except (OSError, ValueError):
                    pass  # a closed pipe (| head) does not stop the run
        return result

    def finished():
        with lock:
            return [results[c.id] for c in selected if c.id in results]

    ceiling = max(options.jobs, getattr(options, "jobs_ceiling", None) or options.jobs)
    governor = _schedule.Governor(options.jobs, ceiling)

    def governed(item):
        governor.admit()
        try:
            return one(item)
        finally:
            governor.release()

    try:
        if ceiling > 1 and len(ordered) > 1:
            pool = concurrent.futures.ThreadPoolExecutor(ceiling, thread_name_prefix="conformance-check")
            futures = []
            try:
                futures = [pool.submit(governed, item) for item in ordered]
                for future in futures:
                    future.result()
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
            finally:
                pool.shutdown(wait=False)  # after an interrupt, main ends the checks still running
        else:
            for item in ordered:
                one(item)
    except Interrupted as stop:
        raise Interrupted(stop.signum, finished()) from None
    return [results[c.id] for c in selected]


def _progress_to_tty(done, total, result):
    sys.stderr.write("\r\033[K[%d/%d] %s %s" % (done, total, result.verdict, result.id))
    if done == total:
        sys.stderr.write("\r\033[K")
    sys.stderr.flush()


def _progress_lines(out):
    """One line per finished check, for a log (CI, a pipe): the run shows it is alive as it goes."""
    def progress(done, total, result):
        out.write("[%*d/%d] %-10s %s  %.2f s\n" % (len(str(total)), done, total, result.verdict, result.id,
                                                  result.duration_s))
        out.flush()
    return progress


def choose_progress(out):
    """The live line on a terminal; a line per check anywhere else."""
    if _isatty(out):
        return _progress_to_tty if _isatty(sys.stderr) else None
    return _progress_lines(out)


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _install_interrupt_handlers():
    """SIGINT and SIGTERM raise Interrupted in the main thread (a second one leaves at once).

    Returns the previous handlers, or None when not on the main thread (an
    in-process caller's thread: signals stay theirs).
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    seen = []

    def on_signal(signum, frame):
        if seen:
            _leave_now(128 + signum)
        seen.append(signum)
        _stopping.set()
        raise Interrupted(signum)
    return dict((signum, signal.signal(signum, on_signal)) for signum in (signal.SIGINT, signal.SIGTERM))


def _end_checks_under_way(grace_s):
    """After an interrupt: no node may start, every node is killed, and the checks under way get
    grace_s to end; then their scratch is removed.  True when every check thread ended."""
    _runner.refuse_new_nodes("the run was interrupted")
    _runner.reap_all()
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and _checks_running():
        time.sleep(0.05)
        _runner.reap_all()
    _checks.remove_scratch_of_running_checks()
    return not _checks_running()


def _checks_running():
    return any(t.name.startswith("conformance-check") and t.is_alive() for t in threading.enumerate())


def _leave_now(status):
    """A second interrupt, or check threads that will not end: kill, clean up, exit without waiting."""
    _runner.refuse_new_nodes("the run was interrupted")
    _runner.reap_all()
    _checks.remove_scratch_of_running_checks()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def check_report_paths(options):
    """A report path that cannot be written is a usage error now, not a traceback after the whole run."""
    for flag, path in (("--junit", options.junit), ("--json", options.json), ("--html", options.html)):
        if not path:
            continue
        if os.path.isdir(path):
            raise UsageError("%s %s is a directory" % (flag, path))
        existed = os.path.exists(path)
        try:
            with open(path, "a"):
                pass
        except OSError as problem:
            raise UsageError("%s %s cannot be written: %s" % (flag, path, problem.strerror or problem))
        if not existed:
            os.remove(path)


def run_cpu_s():
    """(this process's CPU seconds, its nodes' CPU seconds) so far: the nodes are the harness's reaped
    children plus what the fork server reaped (launchers with their nodes, runner.forked_nodes_cpu_s)."""
    times = os.times()
    return (times.user + times.system,
            times.children_user + times.children_system + _runner.forked_nodes_cpu_s())


def list_checks(selected, out):
    width = max([len(c.id) for c in selected] + [10])
    for item in selected:
        out.write("%-*s  %-6s  %-8s  %-24s  %s\n" % (width, item.id, item.level, item.scope,
                                                    ",".join(item.clauses), item.title))
    out.write("%d check%s\n" % (len(selected), "" if len(selected) == 1 else "s"))


def main(argv=None, out=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    out = out or sys.stdout
    try:
        options, node = parse(argv)
    except UsageError as problem:
        sys.stderr.write("conformance: error: %s (see --help)\n" % problem)
        return 2
    try:
        contract_checks = _checks.load(options.contract)
    except Exception:
        sys.stderr.write("conformance: could not load the checks of contract %s (a harness fault):\n%s"
                         % (options.contract, traceback.format_exc()))
        return 1
    all_checks = _static.checks_for(options.contract) + contract_checks
    matched = select(all_checks, options.only)
    selected = [c for c in matched if options.reference or c.scope != _checks.EXAMPLE]
    left_out = len(matched) - len(selected)
    if options.list:
        list_checks(matched, out)
        return 0
    if not selected:
        hint = (" (%d example-work check%s match%s: add --reference)" % (left_out, "" if left_out == 1 else "s",
                                                                        "es" if left_out == 1 else "")
                if left_out else " (see --list)")
        sys.stderr.write("conformance: error: no check matches --only %s%s\n" % (",".join(options.only), hint))
        return 2
    caps = _runner.capabilities()
    interpreter = node_interpreter(options, node)
    notes = ["interpreter: %s" % interpreter,
             "PID 1: %s" % (("yes" if caps.pid1 else "no, %s" % caps.pid1.reason) if options.pid1
                            else "disabled by --no-pid1"),
             "memory cgroup: %s" % (caps.cgroup.value or "no, %s" % caps.cgroup.reason)]
    if options.jobs > 1 or options.repeat > 1:
        notes.append("jobs %s, repeat %d" % (jobs_text(options), options.repeat))
    deployment = _checks.deployment(options.contract)
    if deployment is not None and deployment.overrides():
        notes.append("deployment: %s" % ", ".join(deployment.overrides()))
    if options.reference:
        notes.append("example work: judged (--reference)")
    elif left_out:
        notes.append("example work: not judged (%d check%s of the reference node's own work; --reference "
                     "runs them)" % (left_out, "" if left_out == 1 else "s"))
    started, cpu_before = time.monotonic(), run_cpu_s()
    progress = choose_progress(out)
    if progress is not None and progress is not _progress_to_tty:
        out.write("conformance %s %s: %d check%s, jobs %s\n" % (options.contract, node.display, len(selected),
                                                                "" if len(selected) == 1 else "s", jobs_text(options)))
        out.flush()
    previous = _install_interrupt_handlers()
    _runner.refuse_new_nodes(None)
    _stopping.clear()
    interrupted, all_ended = None, True
    try:
        results = run_all(selected, node, options, progress)
    except Interrupted as stop:
        interrupted, results = stop, stop.finished
        all_ended = _end_checks_under_way(INTERRUPT_GRACE_S)
    finally:
        _runner.reap_all()
        if deployment is not None:
            deployment.reset()  # an in-process caller's next run starts from the contract's values
    incomplete = None
    if interrupted is not None:
        incomplete = ("interrupted by %s after %d of %d checks: the checks under way were stopped and are not in "
                      "this report" % (signal.Signals(interrupted.signum).name, len(results), len(selected)))
    run = _report.RunReport(options.contract, node.display, options.seed, results, strict=options.strict,
                            repeat=options.repeat, wall_s=time.monotonic() - started, notes=notes,
                            incomplete=incomplete, interpreter=interpreter,
                            cpu=tuple(round(after - before, 1) for after, before in zip(run_cpu_s(), cpu_before)))
    try:
        out.write(_report.render_text(run, verbose=options.verbose))
        out.flush()
    except BrokenPipeError:
        pass  # the reader went away (| head): the report files below are still written
    if options.junit:
        _report.write_junit(run, options.junit)
    if options.json:
        _report.write_json(run, options.json)
    if options.html:
        from conformance import report_html
        report_html.write_html(run, options.html)
    if previous is not None:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if interrupted is not None:
        status = 128 + interrupted.signum
        if not all_ended:
            _leave_now(status)  # a check thread that will not end must not hold the exit
        return status
    return _report.exit_status(results)
