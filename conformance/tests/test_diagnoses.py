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
import tempfile
import unittest

from conformance import checks, mutants, runner
from conformance.checks import FAIL, NodeSpec, run_check
from conformance.clauses import REPO_ROOT

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
