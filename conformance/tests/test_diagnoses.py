"""Every assertion of every check says what to fix (STYLE 12: Expected, Actual, one sentence of diagnosis),
and a diagnosis chosen from evidence picks the right fix.

A failing check's card shows Expected, Actual and Diagnosis; the Diagnosis is
what a busy user reads to know what to change in their node. A `ctx.expect`
or `ctx.fail` without one leaves that line empty. This test reads every
check module (conformance/checks/) and every plane (conformance/planes/, whose
wait helpers fail checks through `self.ctx.fail`) with `ast`, so it runs in a
fraction of a second and names the file and line of each call that gives no
diagnosis: none at all, a literal None, or a helper's own parameter whose
default is None (every caller that leaves it out would show none).

A stop check that fails says either "no handler ran" or what the handler
should have done, from what the run shows (conformance/checks/stops.py): the
evidence tests below run copies of the step node with a conformance mutant
applied and read the diagnosis the report would show.
"""

import ast
import os
import shutil
import signal
import tempfile
import types
import unittest

from conformance import checks, mutants, runner
from conformance.checks import FAIL, NodeSpec, run_check, stops
from conformance.checks.crawler import _common as crawler_common
from conformance.checks.scan import _common as scan_common
from conformance.checks.session import _common as session_common
from conformance.checks.step import _common as step_common
from conformance.clauses import REPO_ROOT
from conformance.runner import RunResult

# The trees whose calls fail checks.
SCANNED = [os.path.join("conformance", "checks"), os.path.join("conformance", "planes")]

# Context.expect(cond, expected, actual, diagnosis) and Context.fail(expected, actual, diagnosis):
# the position of `diagnosis` among the positional arguments.
DIAGNOSIS_POSITION = {"expect": 3, "fail": 2}


def python_files(top):
    for folder, dirs, files in os.walk(os.path.join(REPO_ROOT, top)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(folder, name)


def _receiver_is_context(node):
    """ctx.expect, self.ctx.fail, plane.ctx.fail: a call on a check's Context."""
    value = node.func.value
    name = value.id if isinstance(value, ast.Name) else value.attr if isinstance(value, ast.Attribute) else None
    return name == "ctx"


def _none_default_parameters(function):
    """Names of `function`'s parameters whose default is None."""
    if function is None:
        return set()
    args = function.args
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(arg, default) for arg, default in zip(args.kwonlyargs, args.kw_defaults) if default is not None]
    return {arg.arg for arg, default in pairs if isinstance(default, ast.Constant) and default.value is None}


def missing_diagnoses(source, filename="<source>"):
    """[(line, call text)] of the Context assertions in `source` that give no diagnosis."""
    tree = ast.parse(source, filename)
    enclosing = {}
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for inner in ast.walk(function):
                if inner is not function:
                    enclosing[inner] = function  # the walk is outside-in: the innermost function wins
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in DIAGNOSIS_POSITION and _receiver_is_context(node)):
            continue
        position = DIAGNOSIS_POSITION[node.func.attr]
        if any(keyword.arg is None for keyword in node.keywords) or any(
                isinstance(arg, ast.Starred) for arg in node.args):
            continue  # *args or **kwargs: cannot tell here, and no check does it
        given = [keyword.value for keyword in node.keywords if keyword.arg == "diagnosis"]
        if len(node.args) > position:
            given.append(node.args[position])
        value = given[0] if given else None
        function = enclosing.get(node)
        if (value is None or (isinstance(value, ast.Constant) and value.value in (None, ""))
                or (isinstance(value, ast.Name) and function is not None
                    and not isinstance(function, ast.Lambda)
                    and value.id in _none_default_parameters(function))):
            found.append((node.lineno, "%s.%s" % (ast.unparse(node.func.value) if hasattr(ast, "unparse")
                                                  else "ctx", node.func.attr)))
    return sorted(found)


class DiagnosesTest(unittest.TestCase):
    def test_every_assertion_has_a_diagnosis(self):
        problems, calls = [], 0
        for top in SCANNED:
            for path in python_files(top):
                with open(path, encoding="utf-8") as handle:
                    source = handle.read()
                relative = os.path.relpath(path, REPO_ROOT)
                for line, call in missing_diagnoses(source, relative):
                    problems.append("%s:%d: %s(...) gives no diagnosis" % (relative, line, call))
                calls += source.count("ctx.expect(") + source.count("ctx.fail(")
        self.assertGreater(calls, 500, "the scan found too few assertions: did the checks move?")
        self.assertEqual(problems, [], "%d assertion(s) without a diagnosis (say in one sentence what the node "
                                       "most likely does wrong and what to do instead):\n%s"
                         % (len(problems), "\n".join(problems)))

    def test_the_scan_sees_what_it_must(self):
        source = (
            "def helper(ctx, plane, diagnosis=None, why='x'):\n"
            "    ctx.expect(a, 'e', 'a')\n"                                   # 2: none
            "    ctx.expect(a, 'e', 'a', None)\n"                             # 3: literal None
            "    ctx.expect(a, expected='e', actual='a', diagnosis=diagnosis)\n"  # 4: a None default
            "    self.ctx.fail(expected='e', actual='a')\n"                   # 5: none, on self.ctx
            "    plane.ctx.fail('e', 'a')\n"                                  # 6: none, on plane.ctx
            "    ctx.expect(a, 'e', 'a', 'do this instead')\n"                # given positionally
            "    ctx.fail('e', 'a', 'do this instead')\n"
            "    ctx.expect(a, 'e', 'a', diagnosis=why)\n"                    # a parameter with a real default
            "    ctx.expect(a, 'e', 'a', diagnosis=diagnosis or 'fallback')\n"
            "    unittest_case.fail('not a check context')\n")
        self.assertEqual([line for line, _call in missing_diagnoses(source)], [2, 3, 4, 5, 6])



def _stopped(exit_code, signum=signal.SIGTERM, pid1=True, timed_out=False, stderr=(), stdout=()):
    """A RunResult stopped by signum at t=10 s: stderr and stdout lines (t, text) as given."""
    return RunResult(exit_code=exit_code, signals=[(10.0, signum)], t_signal=10.0, is_pid1=pid1,
                     timed_out=timed_out, killed=timed_out, stderr_lines=list(stderr), stdout_lines=list(stdout),
                     stderr="".join(text + "\n" for _t, text in stderr),
                     stdout="".join(text + "\n" for _t, text in stdout))


class EvidenceTest(unittest.TestCase):
    """Which sentence each diagnosis read off a run picks, on made-up runs (no node started)."""

    def test_a_signal_nobody_handled(self):
        self.assertIn("default action", stops.unnoticed(_stopped(-15, pid1=False), noticed=False))
        self.assertIn("as PID 1 the kernel drops",
                      stops.unnoticed(_stopped(-9, timed_out=True), noticed=False, trace="no line"))
        self.assertIsNone(stops.unnoticed(_stopped(20), noticed=True))
        self.assertIsNone(stops.unnoticed(RunResult(exit_code=0), noticed=False))  # no signal sent

    def test_sigint_without_a_handler(self):
        ended = _stopped(1, signum=signal.SIGINT)
        self.assertIn("raised KeyboardInterrupt and the node ended the run", stops.unnoticed(ended, noticed=False))
        ignored = _stopped(-9, signum=signal.SIGINT, timed_out=True)
        self.assertIn("SIGINT is ignored", stops.unnoticed(ignored, noticed=False))
        traced = _stopped(1, signum=signal.SIGINT, stderr=[(10.1, "KeyboardInterrupt")])
        self.assertIn("SIGINT raised KeyboardInterrupt", stops.unnoticed(traced, noticed=False))

    def test_step_reads_the_acknowledgement(self):
        def plane(result, marker=None):
            return types.SimpleNamespace(result=result, marker=marker)
        silent = plane(_stopped(-9, timed_out=True, stderr=[(1.0, "node: execution 41, attempt 2")]))
        self.assertIn("no handler ran", step_common.stop_unnoticed(silent))
        acknowledged = plane(_stopped(-9, timed_out=True,
                                      stderr=[(10.1, "node: stop requested (signal 15); finishing up")]))
        self.assertIsNone(step_common.stop_unnoticed(acknowledged))
        self.assertIsNone(step_common.stop_unnoticed(plane(_stopped(20))))  # a silent handler that exits 20
        # An acknowledgement printed before the signal proves nothing.
        early = plane(_stopped(-9, timed_out=True, stderr=[(9.0, "node: signal 15 is a stop")]))
        self.assertIn("no handler ran", step_common.stop_unnoticed(early))

    def test_step_exit_codes(self):
        def plane(code, **fields):
            return types.SimpleNamespace(result=RunResult(exit_code=code, **fields), marker=None)
        self.assertIn("gives exit 1 (a transient failure) here, but the node exited 10",
                      step_common.exit_diagnosis(plane(10), (1,), "a 503 refusal is transient"))
        self.assertIn("none of the contract's codes", step_common.exit_diagnosis(plane(2), (0,), "a healthy run"))
        self.assertIn("died of signal 11", step_common.exit_diagnosis(plane(-11), (0,), "a healthy run"))
        self.assertIn("still running", step_common.exit_diagnosis(plane(-9, timed_out=True), (1,), "x"))

    def test_step_marker_and_session_summary(self):
        plane = types.SimpleNamespace(result=RunResult(exit_code=1), marker=None)
        self.assertIn("the marker says exit_code 10 but the process exited 1",
                      step_common._marker_diagnosis(plane, {"status": "failed", "exit_code": 10}, "failed", 1))
        plane = types.SimpleNamespace(result=RunResult(exit_code=10), marker=None)
        self.assertIn("recorded a permanent failure where the contract's failure map gives a transient failure",
                      step_common._marker_diagnosis(plane, {"status": "failed", "exit_code": 10}, "failed", 1))
        summary = {"terminal_state": None, "failure_code": "SESSION_WORKER_FAILED"}
        session = types.SimpleNamespace(result=RunResult(exit_code=1), summary=lambda: summary)
        self.assertIn("failure_code SESSION_WORKER_FAILED where the contract gives terminal_state closed",
                      session_common.summary_diagnosis(session, "closed", None, 0))

    def test_crawler_outcome(self):
        def plane(result, line, problem=None):
            return types.SimpleNamespace(result=result, status_line=lambda: line, status_problem=lambda: problem)
        silent = plane(_stopped(-9, timed_out=True), None)
        self.assertIn("no handler ran", crawler_common.outcome_diagnosis(silent, "CRAWLER_CANCELLED", "failed", 143))
        wrong_code = plane(RunResult(exit_code=0), ("CRAWLER_SOURCE_TIMEOUT", "reported"))
        self.assertIn("reported CRAWLER_SOURCE_TIMEOUT where the contract gives CRAWLER_SOURCE_UNAVAILABLE",
                      crawler_common.outcome_diagnosis(wrong_code, "CRAWLER_SOURCE_UNAVAILABLE", "reported", 0))
        two_lines = plane(RunResult(exit_code=0), None, "stderr is not exactly one line ending in a newline")
        self.assertIn("here stderr is not exactly one line",
                      crawler_common.outcome_diagnosis(two_lines, "CRAWLER_CHILD_FAILED", "reported", 0))

    def test_session_and_scan_stops(self):
        control = types.SimpleNamespace(progress_events=lambda: [], reports=lambda probe_id=None: [],
                                        calls=lambda verb=None: [types.SimpleNamespace(verb="claim", t=12.0)])
        went_on = types.SimpleNamespace(result=_stopped(-9, timed_out=True), control=control, summary=lambda: None)
        self.assertIn("no handler ran", session_common.stop_unnoticed(went_on))
        quiet = types.SimpleNamespace(result=_stopped(-9, timed_out=True), summary=lambda: None,
                                      control=types.SimpleNamespace(progress_events=lambda: [],
                                                                    reports=lambda probe_id=None: [],
                                                                    calls=lambda verb=None: []))
        self.assertIsNone(session_common.stop_unnoticed(quiet))  # went quiet: it may have seen the stop and hung
        self.assertIn("no handler ran", scan_common.stop_unnoticed(_stopped(-9, timed_out=True)))
        drained = _stopped(-9, timed_out=True, stdout=[(10.2, scan_common.DRAINING_LINE)])
        self.assertIsNone(scan_common.stop_unnoticed(drained))


def _mutated_node(contract, name, directory):
    """The mutant's node with its REPLACE applied, written under directory; its NodeSpec."""
    mutant = mutants.load_file(os.path.join(mutants.mutants_dir(contract), name + ".py"))
    with open(os.path.join(REPO_ROOT, mutant.node), encoding="utf-8") as handle:
        source = mutants.apply(handle.read(), mutant.replace)
    path = os.path.join(directory, os.path.basename(mutant.node))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    return NodeSpec.from_path(path)


def _run(contract, check_id, node, pid1):
    by_id = dict((item.id, item) for item in checks.load(contract))
    return run_check(by_id[check_id], node, pid1=pid1)


class StopEvidenceTest(unittest.TestCase):
    """A copy of the step node whose SIGTERM handler installation is removed
    (mutant no_sigterm_handler) is told no handler ran, not to shut the socket
    down from a handler it does not have; a copy whose handler runs but only
    sets a flag (flag_only_handler) is still told what the handler must do."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-diagnoses-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_no_handler_as_a_plain_process(self):
        # Not PID 1: SIGTERM's default action kills the node at once (exit -15).
        node = _mutated_node("step", "no_sigterm_handler", self.tmp)
        result = _run("step", "stop.first-byte", node, pid1=False)
        self.assertEqual(result.verdict, FAIL, result.transcript)
        self.assertIn("no handler ran", result.diagnosis)
        self.assertIn("default action", result.diagnosis)
        self.assertNotIn("shut the socket down", result.diagnosis)

    @unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves node runs to make test")
    def test_no_handler_as_pid1(self):
        # As PID 1 the kernel drops the signal: the node runs on until the harness kills it (about 10 s),
        # and its stderr never acknowledges the stop (STEP-STOP-1).
        if not runner.capabilities().pid1:
            self.skipTest(runner.capabilities().pid1.reason)
        node = _mutated_node("step", "no_sigterm_handler", self.tmp)
        result = _run("step", "stop.first-byte", node, pid1=True)
        self.assertEqual(result.verdict, FAIL, result.transcript)
        self.assertIn("no handler ran", result.diagnosis)
        self.assertIn("install a SIGTERM handler", result.diagnosis)
        self.assertIn("as PID 1 the kernel drops the signal", result.diagnosis)
        self.assertNotIn("shut the socket down", result.diagnosis)

    @unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves node runs to make test")
    def test_a_handler_that_only_sets_a_flag(self):
        # The handler runs (its stderr line names signal 15) but cuts nothing: the stop is slow, and the
        # diagnosis is the transfer's, not "no handler ran".
        node = _mutated_node("step", "flag_only_handler", self.tmp)
        result = _run("step", "stop.after-work", node, pid1=True)
        self.assertEqual(result.verdict, FAIL, result.transcript)
        self.assertIn("shut the socket down from the handler", result.diagnosis)
        self.assertNotIn("no handler ran", result.diagnosis)


if __name__ == "__main__":
    unittest.main()
