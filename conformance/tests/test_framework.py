"""Checks framework and command line, end to end on the _selftest contract."""

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

from conformance import checks, cli, runner, timeouts
from conformance.checks import (ERROR, FAIL, NON_STRICT, NOT_JUDGED, PASS, SKIP, Check, CheckFailed, NodeSpec, Skip,
                                run_check)
from conformance.clauses import REPO_ROOT
from conformance.invariants import Violation, dir_empty, no_process_left, scan_for_secrets
from conformance.runner import RunResult
from conformance.timeouts import LONG_TIMEOUT_S, NODE_RUN_TIMEOUT_S, SHORT_TIMEOUT_S

TOY_NODE = os.path.join("conformance", "tests", "data", "toy_node.py")
SUMMARY = re.compile(r"^conformance: \d+ passed, \d+ failed, \d+ not judged, \d+ skipped$")
NODE = NodeSpec.from_path(os.path.join(REPO_ROOT, TOY_NODE))


def make(run, level="MUST", check_id="t.check"):
    return Check(check_id, "_selftest", "T", ["SELFTEST-GREET-1"], level, "a test check", "", "", run)


class FakePlane:
    def __init__(self, violations=(), explode=False):
        self.violations, self.explode, self.closed = list(violations), explode, 0

    def invariants(self):
        if self.explode:
            raise RuntimeError("plane bug")
        return self.violations

    def close(self):
        self.closed += 1


class RegistryTest(unittest.TestCase):
    def test_load_selftest(self):
        loaded = checks.load("_selftest")
        ids = [c.id for c in loaded]
        self.assertEqual(set(ids), {"greet.hello", "greet.progress", "redact.token", "scratch.empty",
                                    "stop.sigterm-pid1", "work.farewell"})
        by_id = dict((c.id, c) for c in loaded)
        self.assertEqual(by_id["stop.sigterm-pid1"].area, "STOP")
        self.assertEqual(by_id["stop.sigterm-pid1"].contract, "_selftest")
        self.assertEqual(by_id["greet.progress"].level, "SHOULD")
        self.assertEqual(by_id["greet.hello"].clauses, ("SELFTEST-GREET-1",))
        self.assertEqual(checks.load("_selftest"), loaded)  # loading twice registers nothing new

    def test_unknown_contract(self):
        with self.assertRaises(checks.UnknownContract):
            checks.load("no_such_contract")
        with self.assertRaises(checks.UnknownContract):
            checks.load("../etc")
        self.assertIn("_selftest", checks.contracts(include_private=True))
        self.assertNotIn("_selftest", checks.contracts())

    def test_decorator_outside_a_contract_package_is_refused(self):
        with self.assertRaises(ValueError):
            checks.check("x.y", clauses=["A-B-1"], level="MUST", title="t")(lambda ctx: None)

    def test_bad_records(self):
        with self.assertRaises(ValueError):
            make(lambda ctx: None, level="MUSTN'T")
        with self.assertRaises(ValueError):
            Check("x", "c", "A", "A-B-1", "MUST", "t", "", "", None)  # a string, not a list

    def test_duplicate_id_from_another_module_is_refused(self):
        first = Check("dup.id", "_dup", "A", ["A-B-1"], "MUST", "t", "", "", None, module="m1")
        checks.register(first)
        try:
            with self.assertRaises(ValueError):
                checks.register(Check("dup.id", "_dup", "A", ["A-B-1"], "MUST", "t", "", "", None, module="m2"))
        finally:
            checks._REGISTRY.pop("_dup", None)


class RunCheckTest(unittest.TestCase):
    def test_pass(self):
        seen = {}

        def run(ctx):
            seen["tmp"] = ctx.tmp
            self.assertTrue(os.path.isdir(ctx.tmp))
            ctx.note("hello\nworld")
        result = run_check(make(run), NODE, seed=7)
        self.assertEqual(result.verdict, PASS)
        self.assertFalse(os.path.exists(seen["tmp"]))  # removed after
        self.assertTrue(result.transcript[0].endswith("hello"))
        self.assertEqual(result.transcript[1].strip(), "world")
        self.assertEqual(result.repro, "python3 -m conformance _selftest %s --only t.check --seed 7"
                         % NODE.display)

    def test_must_fails_should_is_non_strict_unless_strict(self):
        def run(ctx):
            ctx.expect(1 == 2, expected="one", actual=lambda: "two", diagnosis="because")
        result = run_check(make(run, "MUST"), NODE)
        self.assertEqual((result.verdict, result.expected, result.actual, result.diagnosis),
                         (FAIL, "one", "two", "because"))
        self.assertEqual(run_check(make(run, "SHOULD"), NODE).verdict, NON_STRICT)
        self.assertEqual(run_check(make(run, "MAY"), NODE).verdict, NON_STRICT)
        strict = run_check(make(run, "SHOULD"), NODE, strict=True)
        self.assertEqual(strict.verdict, FAIL)
        self.assertIn("--strict", strict.repro)

    def test_skip_and_unavailable_capability(self):
        result = run_check(make(lambda ctx: ctx.skip("not here")), NODE)
        self.assertEqual((result.verdict, result.reason), (SKIP, "not here"))

        def needs(ctx):
            raise runner.CapabilityUnavailable("no cgroup here")
        self.assertEqual(run_check(make(needs), NODE).reason, "no cgroup here")

    def test_harness_exception_is_error_with_traceback(self):
        plane = FakePlane()

        def run(ctx):
            ctx.use(plane)
            raise KeyError("oops")
        result = run_check(make(run), NODE)
        self.assertEqual(result.verdict, ERROR)
        self.assertIn("KeyError", result.reason)
        self.assertTrue(any("Traceback" in line for line in result.transcript))
        self.assertEqual(plane.closed, 1)

    def test_invariant_violation_fails_the_check_and_names_it(self):
        plane = FakePlane([Violation("no secret", "no canary", "canary in stdout")])
        result = run_check(make(lambda ctx: ctx.use(plane), level="SHOULD"), NODE)
        self.assertEqual(result.verdict, FAIL)  # an invariant is a FAIL whatever the level
        self.assertIn("no secret", result.expected)
        self.assertEqual(result.actual, "canary in stdout")
        self.assertEqual(plane.closed, 1)

        def failing(ctx):
            ctx.use(FakePlane([Violation("scratch", "empty", "1 file")]))
            ctx.fail("a", "b")
        both = run_check(make(failing), NODE)
        self.assertEqual((both.verdict, both.expected), (FAIL, "a"))
        self.assertEqual(([v.name for v in both.violations], both.own_failure), (["scratch"], True))
        self.assertEqual(([v.name for v in result.violations], result.own_failure), (["no secret"], False))

    def test_broken_invariants_method_is_error(self):
        plane = FakePlane(explode=True)
        result = run_check(make(lambda ctx: ctx.use(plane)), NODE)
        self.assertEqual(result.verdict, ERROR)
        self.assertEqual(plane.closed, 1)

    def test_started_node_is_tracked_and_reaped(self):
        def run(ctx):
            proc = ctx.start_node({"PATH": "/usr/bin:/bin", "TOY_WAIT": "1"}, pid1=False)
            ctx.expect(proc.wait_for_line("stdout", lambda line: line == "waiting", SHORT_TIMEOUT_S), "waiting", "")
            # left running on purpose: the framework must kill it
        result = run_check(make(run), NODE)
        self.assertEqual(result.verdict, PASS)
        self.assertTrue(any("still running after the check" in line for line in result.transcript))
        self.assertTrue(any(line.startswith("stdout (") for line in result.transcript))
        self.assertEqual(runner.live_processes(), [])

    def test_no_pid1_option(self):
        def run(ctx):
            ctx.start_node({"PATH": "/usr/bin:/bin"}, pid1="require")
        result = run_check(make(run), NODE, pid1=False)
        self.assertEqual((result.verdict, result.reason), (SKIP, "PID 1 disabled by --no-pid1"))
        self.assertIn("--no-pid1", result.repro)

    def test_context_helpers(self):
        found = {}

        def run(ctx):
            found["rng"] = ctx.rng.random()
            found["plane_attr"] = ctx.selftest_plane == ctx.plane
            with self.assertRaises(AttributeError):
                ctx.nothing_here
            with self.assertRaises(CheckFailed):
                ctx.fail("x", "y")
            with self.assertRaises(Skip):
                ctx.skip("z")
        run_check(make(run), NODE, seed=1)
        first = found["rng"]
        run_check(make(run), NODE, seed=1)
        self.assertEqual(found["rng"], first)  # the seed makes the check's stream reproducible
        self.assertTrue(found["plane_attr"])

    def test_command_node_repro(self):
        node = NodeSpec.from_command(["python3", "my node.py"])
        result = run_check(make(lambda ctx: ctx.fail("a", "b")), node)
        self.assertEqual(result.repro, "python3 -m conformance _selftest --only t.check --seed 0 -- "
                                       "python3 'my node.py'")


class InvariantsTest(unittest.TestCase):
    SECRET = "CANARYdeadbeef0123456789"

    def test_scan_for_secrets_everywhere_and_never_prints_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "sub"))
            with open(os.path.join(tmp, "sub", "f.bin"), "wb") as handle:
                handle.write(b"\x00prefix" + self.SECRET.encode() + b"\xff")
            run = RunResult(stdout="ok\n", stderr="token=%s\n" % self.SECRET, host_pid=42,
                            cmdline_snapshot=["node", "--token", self.SECRET], seen_cmdlines={43: ["curl", "x"]})
            found = scan_for_secrets([self.SECRET, "", None], {"marker": b"clean", "result": "has " + self.SECRET},
                                     [tmp], runs=[run])
        places = sorted(v.actual.split(" found in ")[1] for v in found)
        self.assertEqual(places[:2], ["argv of pid 42", "file %s" % os.path.join(tmp, "sub", "f.bin")])
        self.assertEqual(places[2:], ["result", "stderr"])
        for violation in found:
            self.assertNotIn(self.SECRET, violation.actual)
            self.assertIn("CANA... (24 chars)", violation.actual)
        self.assertEqual(scan_for_secrets([], {"x": self.SECRET}), [])

    def test_no_process_left_and_dir_empty(self):
        run = RunResult(leftover=[(7, ["sleep", "60"])])
        self.assertIn("sleep 60", no_process_left([run])[0].actual)
        self.assertEqual(no_process_left([RunResult()]), [])
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(dir_empty(tmp), [])
            self.assertEqual(dir_empty(os.path.join(tmp, "missing")), [])
            open(os.path.join(tmp, "left"), "w").close()
            self.assertEqual(dir_empty(tmp, name="scratch")[0].actual, "1 entry left: left")


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        status = cli.main(list(argv), out=out)
    return status, out.getvalue(), err.getvalue()


class NodeCwdTest(unittest.TestCase):
    """A node file starts in the check's own scratch, never in the harness's directory (a user's repository)."""

    def test_a_relative_write_lands_in_the_checks_scratch(self):
        directory = tempfile.mkdtemp(prefix="conformance-cwd-test-")
        self.addCleanup(__import__("shutil").rmtree, directory, True)
        node = os.path.join(directory, "writes_here.py")
        with open(node, "w") as handle:
            handle.write("import os\nopen('left-behind.txt', 'w').write('x')\nprint(os.getcwd())\n")
        seen = {}

        def run(ctx):
            proc = ctx.start_node({"PATH": "/usr/bin:/bin"}, pid1=False)
            result = proc.wait(NODE_RUN_TIMEOUT_S)
            seen["cwd"] = [line for _t, line in result.stdout_lines][0]
            seen["there"] = os.path.exists(os.path.join(seen["cwd"], "left-behind.txt"))
            seen["tmp"] = ctx.tmp
        self.assertEqual(run_check(make(run), NodeSpec.from_path(node)).verdict, PASS)
        self.assertTrue(seen["cwd"].startswith(seen["tmp"] + os.sep), seen)
        self.assertTrue(seen["there"])
        self.assertFalse(os.path.exists(os.path.join(os.getcwd(), "left-behind.txt")))
        self.assertFalse(os.path.exists(seen["tmp"]))   # and it went with the check


class HangBreakerTest(unittest.TestCase):
    """After the node hung in three checks of a run, later waits are short and what they cut is not judged."""

    WAITING = {"PATH": "/usr/bin:/bin", "TOY_WAIT": "1"}   # the toy waits for a signal: it hangs

    def setUp(self):
        timeouts.reset_breaker()
        self.addCleanup(timeouts.reset_breaker)
        for module, name, value in ((timeouts, "HUNG_WAIT_S", 0.2), (runner, "WORKING_WINDOW_S", 0.3)):
            self.addCleanup(setattr, module, name, getattr(module, name))
            setattr(module, name, value)   # short, so the tests are quick; the rules are the same

    def trip(self):
        for name in ("a.hung", "b.hung", "c.hung"):
            timeouts.begin_check(name)
            timeouts.node_hung()
            timeouts.node_hung()   # once per check, however often
        timeouts.begin_check("t.check")

    def test_three_checks_trip_it_and_a_wait_under_way_is_shortened(self):
        long_wait = timeouts.Deadline(60)
        for name in ("a.hung", "b.hung"):
            timeouts.begin_check(name)
            timeouts.node_hung()
            timeouts.node_hung()
        self.assertFalse(timeouts.tripped())
        self.assertGreater(timeouts.Deadline(60).left(), 50)
        self.trip()
        self.assertEqual(timeouts.hung_checks(), ["a.hung", "b.hung", "c.hung"])
        self.assertLessEqual(long_wait.left(), timeouts.HUNG_WAIT_S)
        self.assertFalse(timeouts.cut_in_this_check())
        short = timeouts.Deadline(0.01)
        self.assertGreater(short.left(), 0)                           # a wait shorter than the cut keeps its length...
        time.sleep(0.02)
        self.assertTrue(short.over())
        self.assertFalse(timeouts.cut_in_this_check())                # ...and ending it is no cut
        self.assertTrue(timeouts.Deadline(-1).over())
        self.assertFalse(timeouts.cut_in_this_check())

    def test_a_node_killed_at_its_timeout_counts_and_the_harness_ending_a_run_does_not(self):
        def run(ctx):
            first = ctx.start_node(self.WAITING, pid1=False)
            ctx.expect(first.wait_for_line("stdout", lambda line: line == "waiting", SHORT_TIMEOUT_S), "waiting", "")
            first.wait(0)                      # the harness ends a run it no longer needs
            ctx.expect(timeouts.hung_checks() == [], "no hang yet", timeouts.hung_checks())
            second = ctx.start_node(self.WAITING, pid1=False)
            ctx.expect(second.wait(0.5).timed_out, "the run killed at its timeout", "it exited")
        self.assertEqual(run_check(make(run), NODE).verdict, PASS)
        self.assertEqual(timeouts.hung_checks(), ["t.check"])

    def test_once_tripped_a_wait_that_runs_out_leaves_the_check_unjudged(self):
        self.trip()

        def run(ctx):
            proc = ctx.start_node(self.WAITING, pid1=False)
            result = proc.wait(NODE_RUN_TIMEOUT_S)
            ctx.expect(result.exit_code == 0, "exit 0", result.describe())
        started = time.monotonic()
        result = run_check(make(run), NODE)
        self.assertLess(time.monotonic() - started, SHORT_TIMEOUT_S)
        self.assertEqual(result.verdict, NOT_JUDGED)   # its own verdict, never folded into SKIP
        self.assertIn("a.hung, b.hung, c.hung", result.reason)
        self.assertIn("rerun this check alone", result.reason)

    def test_once_tripped_a_check_whose_waits_are_met_is_judged(self):
        self.trip()

        def run(ctx):
            proc = ctx.start_node({"PATH": "/usr/bin:/bin"}, pid1=False)
            ctx.fail("a verdict", "from a run that ended by itself: %s" % proc.wait(NODE_RUN_TIMEOUT_S).describe())
        self.assertEqual(run_check(make(run), NODE).verdict, FAIL)

    def test_a_working_node_gets_its_full_wait_and_an_idle_one_does_not(self):
        self.trip()
        spinning = NodeSpec.from_command([sys.executable, "-c", "while True: pass"])
        sleeping = NodeSpec.from_command([sys.executable, "-c", "import time; time.sleep(60)"])
        waited = {}

        def run(ctx):
            proc = ctx.start_node({"PATH": "/usr/bin:/bin"}, pid1=False)
            started = time.monotonic()
            result = proc.wait(1.5)
            waited[ctx.node.display] = time.monotonic() - started
            ctx.expect(not result.timed_out, "an exit", "killed at its timeout")
        self.assertEqual(run_check(make(run), spinning).verdict, FAIL)    # judged: it used its whole wait
        self.assertGreaterEqual(waited[spinning.display], 1.5)
        self.assertEqual(run_check(make(run), sleeping).verdict, NOT_JUDGED)    # idle: cut short
        self.assertLess(waited[sleeping.display], 1.5)

    def test_full_waits_turns_it_off(self):
        status, _out, _err = run_cli("_selftest", TOY_NODE, "--only", "greet.hello", "--full-waits")
        self.assertEqual(status, 0)
        self.trip()
        self.assertFalse(timeouts.tripped())
        self.assertGreater(timeouts.Deadline(60).left(), 50)

    def test_each_run_of_checks_starts_afresh(self):
        self.trip()
        status, _out, _err = run_cli("_selftest", TOY_NODE, "--only", "greet.hello")
        self.assertEqual(status, 0)
        self.assertEqual(timeouts.hung_checks(), [])


class CliTest(unittest.TestCase):
    def test_usage_errors_exit_2_with_one_line(self):
        cases = [("nope", TOY_NODE), ("_selftest", "missing.py"), ("_selftest", TOY_NODE, "--jobs", "0"),
                 ("_selftest", TOY_NODE, "--bogus"), ("_selftest",), ("_selftest", TOY_NODE, "--only", "zzz*"),
                 ("_selftest", TOY_NODE, "--"), ("_selftest", TOY_NODE, "--", "python3", "x.py")]
        for argv in cases:
            status, out, err = run_cli(*argv)
            self.assertEqual(status, 2, argv)
            self.assertEqual(len(err.strip().splitlines()), 1, (argv, err))
            self.assertTrue(err.startswith("conformance: error: "), err)
        self.assertIn("unknown contract 'nope'", run_cli("nope", TOY_NODE)[2])

    def test_list_and_only_globs(self):
        status, out, _ = run_cli("_selftest", "--list", "--only", "greet.*,SELFTEST-STOP-*")
        self.assertEqual(status, 0)
        listed = [line.split()[0] for line in out.splitlines()[:-1]]
        self.assertEqual(sorted(listed), ["greet.hello", "greet.progress", "stop.sigterm-pid1"])
        status, out, _ = run_cli("_selftest", "--list")
        self.assertIn("node.stdlib", out)
        self.assertTrue(out.strip().endswith("9 checks"))   # --list shows the example-work check too
        self.assertRegex(out, r"work\.farewell +MUST +example ")

    def test_full_run_passes_with_json_and_junit(self):
        with tempfile.TemporaryDirectory() as tmp:
            json_path, junit_path = os.path.join(tmp, "r.json"), os.path.join(tmp, "r.xml")
            status, out, _ = run_cli("_selftest", TOY_NODE, "--jobs", "3", "--json", json_path,
                                     "--junit", junit_path)
            self.assertEqual(status, 0, out)
            self.assertRegex(out.splitlines()[-1], SUMMARY)
            self.assertEqual(out.splitlines()[-1], "conformance: 8 passed, 0 failed, 0 not judged, 0 skipped")   # no work.*
            with open(json_path) as handle:
                document = json.load(handle)
            self.assertEqual([c["id"] for c in document["checks"]][:3], ["node.stdlib", "node.help", "node.import"])
            self.assertEqual(document["summary"]["PASS"], 8)
            self.assertEqual({c["scope"] for c in document["checks"]}, {"platform"})
            self.assertTrue(os.path.getsize(junit_path) > 0)

    def test_example_work_runs_only_with_reference(self):
        # A toy whose own work is different: it greets, but says something else on leaving.
        with tempfile.TemporaryDirectory() as tmp:
            other = os.path.join(tmp, "other.py")
            with open(os.path.join(REPO_ROOT, TOY_NODE)) as handle:
                source = handle.read()
            with open(other, "w") as handle:
                handle.write(source.replace('print("bye", flush=True)', 'print("see you", flush=True)'))
            status, out, _ = run_cli("_selftest", other, "--only", "greet.hello,work.*")
            self.assertEqual(status, 0, out)
            self.assertIn("example work: not judged (1 check of the reference node's own work; --reference "
                          "runs them)", out)
            self.assertNotIn("work.farewell", out)
            status, out, _ = run_cli("_selftest", other, "--only", "greet.hello,work.*", "--reference")
            self.assertEqual(status, 1)
            self.assertIn("example work: judged (--reference)", out)
            self.assertIn("Rerun:     python3 -m conformance _selftest %s --only work.farewell --seed 0 --reference"
                          % other, out)
            status, _out, err = run_cli("_selftest", other, "--only", "work.*")
            self.assertEqual(status, 2)
            self.assertIn("(1 example-work check matches: add --reference)", err)

    def test_scope_follows_the_clauses_cited(self):
        loaded = {c.id: c for c in checks.load("_selftest")}
        self.assertEqual(loaded["work.farewell"].scope, checks.EXAMPLE)
        self.assertEqual(loaded["greet.hello"].scope, checks.PLATFORM)
        mixed = Check("t.mixed", "_selftest", "T", ["SELFTEST-GREET-1", "SELFTEST-WORK-1"], "MUST", "t", "", "",
                      None)
        checks.set_scopes("_selftest", [mixed])
        self.assertEqual(mixed.scope, checks.EXAMPLE)   # one example clause makes the whole check example work

    def test_repeat_labels_stability(self):
        status, out, _ = run_cli("_selftest", TOY_NODE, "--only", "greet.hello", "--repeat", "2", "--seed", "5")
        self.assertEqual(status, 0)
        self.assertIn("[stable: PASS 2]", out)

    def test_failing_node_exits_1_and_command_node_skips_static(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.py")
            with open(os.path.join(REPO_ROOT, TOY_NODE)) as handle:
                source = handle.read()
            with open(bad, "w") as handle:
                handle.write(source.replace('print("hello, %s" % name', 'print("bye, %s" % name'))
            status, out, _ = run_cli("_selftest", bad, "--only", "greet.*")
            self.assertEqual(status, 1)
            self.assertIn("Rerun:     python3 -m conformance _selftest %s --only greet.hello --seed 0" % bad, out)
            self.assertEqual(out.splitlines()[-1], "conformance: 1 passed, 1 failed, 0 not judged, 0 skipped")
            status, out, _ = run_cli("_selftest", "--only", "node.*,greet.hello", "--", sys.executable, bad)
            self.assertEqual(status, 1)
            self.assertEqual(out.splitlines()[-1], "conformance: 0 passed, 1 failed, 0 not judged, 3 skipped")
            self.assertIn("not a Python file", out)

    def test_module_entry_point(self):
        done = subprocess.run([sys.executable, "-m", "conformance", "_selftest", TOY_NODE, "--only", "greet.hello"],
                              cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=LONG_TIMEOUT_S)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.decode().splitlines()[-1], "conformance: 1 passed, 0 failed, 0 not judged, 0 skipped")
        usage = subprocess.run([sys.executable, "-m", "conformance", "nope", TOY_NODE], cwd=REPO_ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=LONG_TIMEOUT_S)
        self.assertEqual(usage.returncode, 2)


if __name__ == "__main__":
    unittest.main()
