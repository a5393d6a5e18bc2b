"""The checks framework: a check is a record, run as Arrange / Act / Assert.

A contract's checks live in ``conformance/checks/<contract>/<area>.py``; the
package's ``__init__.py`` imports its area modules (any submodule it does not
import is imported by `load` anyway). A check is declared with `check`:

    from conformance.checks import check

    @check("stop.first-byte", clauses=["STEP-STOP-2"], level="MUST",
           title="SIGTERM while waiting for a GET's first byte",
           fakes="the store accepts the input GET and sends nothing",
           expected="exit 20 within 1 s; a cancelled marker")
    def _(ctx):
        plane = ctx.plane(...)                # Arrange: conformance/planes/<contract>.py
        proc = plane.start()                  # Act
        ...
        ctx.expect(result.exit_code == 20, expected="exit 20", actual="exit %s" % result.exit_code,
                   diagnosis="the SIGTERM handler did not end the run as cancelled")   # Assert

The contract comes from the module path (``conformance.checks.<contract>.<area>``),
the area from the module name (``stop`` -> STOP). `run_check` gives each run a
fresh `Context`, then folds in every used plane's invariants, closes the
planes and removes the check's temporary directory, whatever happened.

Verdicts
--------
PASS        the check held.
FAIL        a MUST check did not hold, or an invariant broke (any level), or a
            SHOULD/MAY check did not hold under ``--strict``.
NON-STRICT  a SHOULD or MAY check did not hold (counts as passed without --strict).
SKIP        the check could not run here (reason given), e.g. no PID namespace.
NOT-JUDGED  the check ran, but a wait the hang breaker shortened ran out
            (conformance/timeouts.py): the node had hung in three other
            checks, so what followed proves nothing either way.  Not a pass,
            and not the node's failure of this clause: rerun it alone.
ERROR       the harness itself failed (an exception in a check, a plane or the
            runner); never counted against the node, but the run is not green.
"""

import importlib
import os
import pkgutil
import random
import shlex
import shutil
import tempfile
import threading
import time
import traceback

import conformance as _conformance
from conformance import runner as _runner
from conformance import timeouts as _timeouts
from conformance.invariants import Violation, no_process_left  # noqa: F401 (Violation re-exported for planes)
from conformance.timeouts import REAP_TIMEOUT_S

LEVELS = ("MUST", "SHOULD", "MAY")
PASS, FAIL, NON_STRICT, SKIP, ERROR = "PASS", "FAIL", "NON-STRICT", "SKIP", "ERROR"
NOT_JUDGED = "NOT-JUDGED"
VERDICTS = (PASS, FAIL, NON_STRICT, SKIP, ERROR, NOT_JUDGED)

# Lines of a node's stdout/stderr copied into a check's transcript.
TRANSCRIPT_TAIL_LINES = 40

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class CheckFailed(Exception):
    """The node did not do what the clause requires."""

    def __init__(self, expected, actual, diagnosis=None):
        super().__init__("expected %s; actual %s" % (expected, actual))
        self.expected, self.actual, self.diagnosis = expected, actual, diagnosis


class Skip(Exception):
    """The check cannot run here; `reason` says why."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class UnknownContract(LookupError):
    """No package conformance/checks/<contract>/."""


PLATFORM, EXAMPLE = "platform", "example"


class Check:
    """One check: what it verifies (clauses, level), what the fakes do, what
    is expected, and the run function.

    `scope` is PLATFORM for a check of the platform's obligations (what any
    node on the platform must do: judged in every run) and EXAMPLE for a
    check of the reference node's example work (judged only with
    --reference). It follows from the clauses cited: a check citing any
    clause of an [example work] section is an EXAMPLE check, so a platform
    check can never depend on what a node's [EDIT] sections do.
    """

    __slots__ = ("id", "contract", "area", "clauses", "level", "title", "fakes", "expected", "run", "module",
                 "scope")

    def __init__(self, id, contract, area, clauses, level, title, fakes, expected, run, module=None):
        if level not in LEVELS:
            raise ValueError("check %s: level must be one of %s, not %r" % (id, "/".join(LEVELS), level))
        if not clauses or isinstance(clauses, str):
            raise ValueError("check %s: clauses must be a non-empty list of clause IDs" % id)
        self.id, self.contract, self.area = id, contract, area
        self.clauses = tuple(clauses)
        self.level, self.title, self.fakes, self.expected = level, title, fakes, expected
        self.run, self.module = run, module
        self.scope = PLATFORM   # set from the contract document by load()

    def __repr__(self):
        return "Check(%r, %s, %s)" % (self.id, self.level, ",".join(self.clauses))


_registry_lock = threading.RLock()
_REGISTRY = {}   # contract -> {check id -> Check}, in registration order


def register(item):
    """Add a Check to its contract's registry (the decorator calls this)."""
    with _registry_lock:
        checks = _REGISTRY.setdefault(item.contract, {})
        known = checks.get(item.id)
        if known is not None and known.module != item.module:
            raise ValueError("check id %s defined twice (%s and %s)" % (item.id, known.module, item.module))
        checks[item.id] = item
    return item


def check(id, clauses, level, title, fakes="", expected="", area=None):
    """Decorator: register the function as the run function of a check."""
    def decorate(fn):
        parts = fn.__module__.split(".")
        if len(parts) < 4 or parts[:2] != ["conformance", "checks"]:
            raise ValueError("@check %s must be used in conformance/checks/<contract>/<area>.py, not %s"
                             % (id, fn.__module__))
        register(Check(id, parts[2], (area or parts[3]).upper(), list(clauses), level, title,
                       fakes, expected, fn, fn.__module__))
        return fn
    return decorate


def contracts(include_private=False):
    """Names of the contracts that have a checks package."""
    names = []
    for entry in sorted(os.listdir(_PACKAGE_DIR)):
        if os.path.isfile(os.path.join(_PACKAGE_DIR, entry, "__init__.py")):
            if include_private or not entry.startswith("_"):
                names.append(entry)
    return names


def load(contract):
    """Import conformance.checks.<contract> and its area modules; return its checks in order."""
    if not contract.replace("_", "").isalnum() or contract not in contracts(include_private=True):
        raise UnknownContract(contract)
    package = importlib.import_module("conformance.checks." + contract)
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("_"):
            importlib.import_module("conformance.checks.%s.%s" % (contract, info.name))
    with _registry_lock:
        loaded = list(_REGISTRY.get(contract, {}).values())
    set_scopes(contract, loaded)
    return loaded


def reference_node(contract):
    """The contract's reference node (REFERENCE_NODE of its checks package, a
    path from the repository root), or None.  A contract is registered by
    having a checks package; every list of contracts (make test, make check,
    make conformance, the mutants) is read from here."""
    if contract not in contracts(include_private=True):
        return None
    package = importlib.import_module("conformance.checks." + contract)
    return getattr(package, "REFERENCE_NODE", None)


def in_progress(contract):
    """Why the contract's checks are still being written (IN_PROGRESS of its checks
    package, one sentence naming the issue), or None for a finished contract.

    Traceability reports the coverage still missing from such a contract (a MUST
    clause without a check, a check without a mutant) as planned work instead of
    holes; everything that exists is held to the usual rules: its checks pass on
    the reference node, its mutants are killed, every cited clause exists."""
    if contract not in contracts(include_private=True):
        return None
    package = importlib.import_module("conformance.checks." + contract)
    return getattr(package, "IN_PROGRESS", None)


def deployment(contract):
    """The contract's Deployment (its deployment constants, conformance/deployment.py), or None."""
    if contract not in contracts(include_private=True):
        return None
    package = importlib.import_module("conformance.checks." + contract)
    return getattr(package, "DEPLOYMENT", None)


def set_scopes(contract, items):
    """Mark each check EXAMPLE when it cites an example-work clause of the
    contract's document (PLATFORM otherwise, and when there is no document)."""
    from conformance import clauses as _clauses
    try:
        doc = _clauses.load(contract)
    except _clauses.ContractNotFound:
        return
    for item in items:
        cited = [doc.clauses.get(clause_id) for clause_id in item.clauses]
        item.scope = EXAMPLE if any(c is not None and c.example for c in cited) else PLATFORM


class NodeSpec:
    """The node under test: argv to run it, its file (None for a command), and
    how the user named it (for repro lines)."""

    def __init__(self, argv, path=None, display=None, python=None):
        self.argv = list(argv)
        self.path = path
        self.display = display if display is not None else (path or shlex.join(self.argv))
        self.python = python  # the interpreter --python named (repeated in rerun lines), or None

    @classmethod
    def from_path(cls, path, python=None):
        import sys
        absolute = os.path.abspath(path)
        if absolute.endswith(".py"):
            return cls([python or sys.executable, absolute], absolute, path, python=python)
        return cls([absolute], None, path)

    @classmethod
    def from_command(cls, argv):
        return cls(argv, None, "-- " + shlex.join(argv))

    def __repr__(self):
        return "NodeSpec(%r)" % (self.argv,)


class Context:
    """What a check's run function gets: the node, the seed, a private
    temporary directory, planes, and the transcript."""

    def __init__(self, check, node, seed=0, verbose=False, strict=False, pid1=True):
        self.check = check
        self.contract = check.contract
        self.node = node
        self.seed = seed
        self.verbose = verbose
        self.strict = strict
        self.pid1_allowed = pid1
        self.rng = random.Random("%s:%s" % (seed, check.id))   # the check's own reproducible stream
        self.tmp = tempfile.mkdtemp(prefix="conformance-%s-" % check.id.replace("/", "_"))
        with _scratch_lock:
            _scratch.add(self.tmp)
        self.transcript = []
        self.planes = []
        self.processes = []
        self._t0 = time.monotonic()

    # ---- planes ------------------------------------------------------------
    def use(self, plane):
        """Register a plane (anything with close() and invariants()); returns it."""
        self.planes.append(plane)
        return plane

    def plane(self, *args, **kwargs):
        """Make and register the contract's plane: conformance.planes.<contract>,
        through its make_plane(ctx, ...) function or its Plane(ctx, ...) class."""
        module = importlib.import_module("conformance.planes." + self.contract)
        factory = getattr(module, "make_plane", None) or getattr(module, "Plane")
        return self.use(factory(self, *args, **kwargs))

    def __getattr__(self, name):
        # ctx.step_plane(...) is ctx.plane(...) for the step contract.
        if name == self.__dict__.get("contract", "").lstrip("_") + "_plane":
            return self.plane
        raise AttributeError(name)

    # ---- the node ----------------------------------------------------------
    def start_node(self, env, args=(), cwd=None, pid1=True, memory_limit_bytes=None):
        """Start the node (its argv plus args) through the runner and track it:
        it is killed after the check if still running. pid1: True/False/"require"
        (see Runner.start); --no-pid1 turns True into False and "require" into SKIP."""
        if not self.pid1_allowed:
            if pid1 == "require":
                raise Skip("PID 1 disabled by --no-pid1")
            pid1 = False
        if cwd is None and self.node.path is not None:
            # A node file starts in a scratch directory of the check's own, never in the directory the
            # harness was started from (the user's repository): what a node writes by a relative path
            # lands here and goes with the check. (A `-- COMMAND` node keeps the harness's directory:
            # its command may name its files relative to it.)
            cwd = self.node_cwd()
        proc = _runner.Runner.start(self.node.argv + list(args), env, cwd=cwd, pid1=pid1,
                                    memory_limit_bytes=memory_limit_bytes)
        self.processes.append(proc)
        self.note("started node pid %s%s%s" % (proc.host_pid, " as PID 1" if proc.is_pid1 else "",
                                               ", memory limit %d MiB" % (memory_limit_bytes >> 20)
                                               if memory_limit_bytes else ""))
        return proc

    def require_pid1(self):
        """SKIP unless nodes can run as PID 1 here."""
        if not self.pid1_allowed:
            raise Skip("PID 1 disabled by --no-pid1")
        caps = _runner.capabilities()
        if not caps.pid1:
            raise Skip("PID 1 unavailable: %s" % caps.pid1.reason)

    def require_cgroup(self):
        """SKIP unless a memory cgroup is writable here."""
        caps = _runner.capabilities()
        if not caps.cgroup:
            raise Skip("memory cgroup unavailable: %s" % caps.cgroup.reason)

    # ---- assertions and notes -------------------------------------------
    def expect(self, cond, expected, actual, diagnosis=None):
        """Raise CheckFailed unless cond. `actual` and `diagnosis` may be callables
        (evaluated only on failure: a diagnosis read off the run's evidence costs nothing on a pass)."""
        if not cond:
            raise CheckFailed(expected, actual() if callable(actual) else actual,
                              diagnosis() if callable(diagnosis) else diagnosis)

    def fail(self, expected, actual, diagnosis=None):
        raise CheckFailed(expected, actual, diagnosis() if callable(diagnosis) else diagnosis)

    def skip(self, reason):
        raise Skip(reason)

    def note(self, text):
        """Add a line to the transcript, stamped with seconds since the check started."""
        stamp = "%7.3f " % (time.monotonic() - self._t0)
        for i, line in enumerate(str(text).splitlines() or [""]):
            self.transcript.append((stamp if i == 0 else " " * len(stamp)) + line)

    def tmpdir(self, name):
        """A fresh subdirectory of ctx.tmp."""
        path = os.path.join(self.tmp, name)
        os.makedirs(path, exist_ok=True)
        return path

    def node_cwd(self):
        """The working directory a node file starts in: under ctx.tmp, reachable by a node run as
        another user (ctx.tmp can be passed through, not listed)."""
        path = self.tmpdir("node-cwd")
        os.chmod(self.tmp, os.stat(self.tmp).st_mode | 0o111)
        os.chmod(path, 0o1777)
        return path


class CheckResult:
    """The outcome of one check."""

    def __init__(self, check, verdict, duration_s, expected=None, actual=None, diagnosis=None,
                 repro=None, transcript=None, reason=None):
        self.id = check.id
        self.contract = check.contract
        self.area = check.area
        self.clauses = list(check.clauses)
        self.level = check.level
        self.scope = check.scope
        self.title = check.title
        self.verdict = verdict
        self.duration_s = duration_s
        self.expected, self.actual, self.diagnosis = expected, actual, diagnosis
        self.repro = repro
        self.transcript = transcript or []
        self.reason = reason           # SKIP or NOT-JUDGED reason, or ERROR summary
        self.runs = [verdict]          # verdicts of every repetition (--repeat)
        self.stability = None          # "stable" / "flaky" with --repeat
        self.violations = []           # invariants this run broke (a FAIL's cause, or one of them)
        self.own_failure = True        # False: the check's own assertions held, only invariants broke
        self.node_starts = 0           # times the node file was started (runner.count_node_start)

    @property
    def failed(self):
        return self.verdict in (FAIL, NON_STRICT, ERROR, NOT_JUDGED)

    def __repr__(self):
        return "CheckResult(%r, %s)" % (self.id, self.verdict)


def repro_command(contract, node, check_id, seed, strict=False, pid1=True, example=False):
    """The one command that reruns this check alone."""
    options = ["--only", check_id, "--seed", str(seed)]
    if node.python:
        options += ["--python", node.python]
    settings = deployment(contract)
    for assignment in settings.overrides() if settings is not None else ():
        options += ["--deploy", assignment]
    if example:
        options.append("--reference")
    if strict:
        options.append("--strict")
    if not pid1:
        options.append("--no-pid1")
    head = _conformance.launcher() + [contract]
    if node.path is None and node.display.startswith("-- "):
        return " ".join([shlex.join(head + options), node.display])
    return shlex.join(head + [node.display] + options)


def _tail(label, lines):
    shown = lines[-TRANSCRIPT_TAIL_LINES:]
    out = ["%s (%d line%s%s):" % (label, len(lines), "" if len(lines) == 1 else "s",
                                   ", last %d" % len(shown) if len(shown) < len(lines) else "")]
    out.extend("  | " + line for _t, line in shown)
    return out


def run_check(check, node, seed=0, verbose=False, strict=False, pid1=True):
    """Run one check: Arrange/Act/Assert, then invariants, then cleanup. Never raises."""
    started = time.monotonic()
    _timeouts.begin_check(check.id)
    ctx = Context(check, node, seed=seed, verbose=verbose, strict=strict, pid1=pid1)
    verdict, expected, actual, diagnosis, reason = PASS, None, None, None, None
    try:
        check.run(ctx)
    except CheckFailed as failure:
        verdict = FAIL if check.level == "MUST" or strict else NON_STRICT
        expected, actual, diagnosis = failure.expected, failure.actual, failure.diagnosis
    except Skip as skipped:
        verdict, reason = SKIP, skipped.reason
    except _runner.CapabilityUnavailable as missing:
        verdict, reason = SKIP, missing.reason
    except Exception as exc:  # a harness fault, never the node's
        verdict, reason = ERROR, "%s: %s" % (type(exc).__name__, exc)
        ctx.note("harness error:\n" + traceback.format_exc().rstrip())
    violations = []
    # Processes the check left running are killed (the check's defect, not the node's).
    for proc in ctx.processes:
        if proc.running():
            ctx.note("node pid %s still running after the check; killed" % proc.host_pid)
            try:
                proc.wait(0)
            except _runner.HarnessError as exc:
                verdict, reason = ERROR, str(exc)
        result = proc.result
        if result is not None:
            ctx.note("node run: " + result.describe())
            ctx.transcript.extend(_tail("stdout", result.stdout_lines))
            ctx.transcript.extend(_tail("stderr", result.stderr_lines))
            violations.extend(no_process_left([result]))
    for plane in ctx.planes:
        try:
            violations.extend(plane.invariants() or [])
        except Exception as exc:
            if verdict != ERROR:
                verdict, reason = ERROR, "invariants of %s: %s: %s" % (type(plane).__name__, type(exc).__name__, exc)
            ctx.note("harness error in invariants:\n" + traceback.format_exc().rstrip())
    for violation in violations:
        ctx.note("invariant broken: %s: expected %s; actual %s" % (violation.name, violation.expected,
                                                                   violation.actual))
    own_failure = verdict in (FAIL, NON_STRICT)
    if violations and verdict != ERROR:
        first = violations[0]
        names = ", ".join(sorted({v.name for v in violations}))
        if verdict in (FAIL, NON_STRICT):
            verdict = FAIL  # the reports name the invariants as this result's causes (report.causes)
        else:
            verdict = FAIL
            expected = "invariant %s: %s" % (first.name, first.expected)
            actual = "; ".join(v.actual for v in violations)
            diagnosis = first.diagnosis or "invariant broken: %s" % names
    for plane in reversed(ctx.planes):
        try:
            plane.close()
        except Exception as exc:
            ctx.note("harness error closing %s:\n%s" % (type(plane).__name__, traceback.format_exc().rstrip()))
            if verdict in (PASS, SKIP):
                verdict, reason = ERROR, "closing %s: %s: %s" % (type(plane).__name__, type(exc).__name__, exc)
    for proc in ctx.processes:  # a plane may have started processes after all
        if proc.running():
            try:
                proc.wait(REAP_TIMEOUT_S)
            except _runner.HarnessError:
                pass
    shutil.rmtree(ctx.tmp, ignore_errors=True)
    with _scratch_lock:
        _scratch.discard(ctx.tmp)
    if _timeouts.cut_in_this_check() and verdict != ERROR:
        # A wait the breaker shortened ran out: whatever followed proves nothing.
        hung = [name for name in _timeouts.hung_checks() if name != check.id]
        named = ", ".join(hung[:_timeouts.HANG_LIMIT]) + (
            " and %d more" % (len(hung) - _timeouts.HANG_LIMIT) if len(hung) > _timeouts.HANG_LIMIT else "")
        verdict, expected, actual, diagnosis = NOT_JUDGED, None, None, None
        reason = ("the node had already hung in %d other checks (%s), so the harness waited "
                  "at most %.0f s for it here; fix those first, or rerun this check alone (or the run with "
                  "--full-waits) for the full wait"
                  % (len(hung), named, _timeouts.HUNG_WAIT_S))
        ctx.note("harness: " + reason)
    if verdict == ERROR and expected is None:
        expected, actual = "the harness runs the check to completion", reason
        diagnosis = "harness fault, not the node's: see the transcript"
    # Reports are logs too: a credential the node leaked is shown as [secret].
    secrets = []
    for plane in ctx.planes:
        try:
            secrets.extend(plane.secrets() if hasattr(plane, "secrets") else [])
        except Exception:
            pass
    transcript = [mask_secrets(line, secrets) for line in ctx.transcript]
    expected, actual, diagnosis = (mask_secrets(text, secrets) for text in (expected, actual, diagnosis))
    repro = repro_command(check.contract, node, check.id, seed, strict, pid1, example=check.scope == EXAMPLE)
    result = CheckResult(check, verdict, time.monotonic() - started, expected, actual, diagnosis,
                         repro, transcript, reason)
    result.node_starts = _runner.take_node_starts(check.id)
    if verdict == FAIL and violations:
        # The report says an invariant broken in several checks once, as their cause (report.causes).
        result.violations = [Violation(*(mask_secrets(part, secrets) for part in v)) for v in violations]
        result.own_failure = own_failure
    return result


# The temporary directories of the checks under way: an interrupted run removes
# them even when a check does not end in time to remove its own.
_scratch_lock = threading.Lock()
_scratch = set()


def remove_scratch_of_running_checks():
    with _scratch_lock:
        paths = list(_scratch)
        _scratch.clear()
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


def mask_secrets(text, secrets):
    """text with every secret value replaced by [secret] (None stays None)."""
    if text is None or not secrets:
        return text
    text = str(text)
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = text.replace(secret, "[secret]")
    return text
