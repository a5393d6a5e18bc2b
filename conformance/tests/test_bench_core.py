"""The benches' shared core: what a contract's bench gets from it without running a node.

A toy Bench (no node, no plane) goes through core.main as a contract's
bench would: the common options, the report's budget table and footer, the
--json document. The stop-trial driver is run with a fake trial.
"""

import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest

from conformance.bench import core


class ToyBench(core.ContractBench):
    DESCRIPTION = "A toy bench."
    DEFAULT_NODE = os.path.join("nodes", "hello_node.py")
    REPS, QUICK_REPS = 4, 1
    TRIALS, QUICK_TRIALS = 6, 2
    SCHEMA = "toy/1"
    BUDGETS_TITLE = "Budgets of the toy"

    @classmethod
    def from_options(cls, options):
        made = cls()
        made.node, made.reps, made.trials = core.program(options.node), options.reps, options.trials
        return made

    def run(self):
        self.values = [float(rep) for rep in core.repetitions(self.reps, "toy")]

    def figures(self):
        return {"value": core.median_range(self.values)}

    def budgets(self, figures, wall_s):
        return [("value", "<= 10", "%.1f" % core.median(figures["value"]), core.median(figures["value"]) <= 10)]

    def render(self, figures, wall_s):
        return core.table(["what", "median [min-max]"], [["value", core.cell(figures["value"], "%.1f")]])

    def document(self):
        return {"values": self.values}


FAKE_RUN = {"exit": 0, "interpreter_start_ms": 29.0, "wall_s": 44.9, "checks": 5, "passed": 5, "failed": 0,
            "node_starts": 7, "harness_cpu_s": 0.1, "nodes_cpu_s": 0.5}


class MainTest(unittest.TestCase):
    def setUp(self):
        self.conformance_runs = []  # the real one runs a whole contract: core.conformance_run is tested below
        real, core.conformance_run = core.conformance_run, lambda *args: self.conformance_runs.append(args) or FAKE_RUN
        self.addCleanup(setattr, core, "conformance_run", real)

    def run_main(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = core.main(ToyBench, list(argv))
            except SystemExit as exc:
                status = exc.code
        return status, out.getvalue(), err.getvalue()

    def test_report_budgets_footer_and_json(self):
        scratch = tempfile.mkdtemp(prefix="test-bench-core-")
        self.addCleanup(shutil.rmtree, scratch, ignore_errors=True)
        path = os.path.join(scratch, "toy.json")
        status, out, _ = self.run_main("--json", path)
        self.assertEqual(status, 0)
        lines = out.splitlines()
        self.assertEqual(lines[:3], ["what   median [min-max]", "-----  ----------------", "value  1.5 [0.0-3.0]"])
        self.assertIn("Budgets of the toy, judged for hello_node", lines)
        self.assertIn(" ".join(core.BUDGET_HEADERS), [" ".join(line.split()) for line in lines])
        self.assertRegex(lines[-1], r"^bench: finished in \d+ s$")
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
        self.assertEqual(doc["schema"], "toy/1")
        self.assertEqual(doc["options"], {"reps": 4, "trials": 6, "quick": False})
        self.assertEqual(doc["values"], [0.0, 1.0, 2.0, 3.0])
        conformance = {"figure": "default conformance run (python3 -m conformance test_bench_core NODE), %d cores"
                                 % (os.cpu_count() or 1),
                       "budget": "<= 45 s on 2 cores", "this_run": "44.9 s (an interpreter starts in 29 ms)", "met": True}
        self.assertEqual(doc["budgets"], [{"figure": "value", "budget": "<= 10", "this_run": "1.5", "met": True},
                                          conformance])
        self.assertEqual(doc["figures"]["conformance_run"], FAKE_RUN)
        self.assertEqual([args[0] for args in self.conformance_runs], ["test_bench_core"])
        for key in ("node", "machine", "wall_s", "figures"):
            self.assertIn(key, doc)

    def test_quick_and_explicit_counts(self):
        status, out, _ = self.run_main("--quick")
        self.assertIn("value  0.0 [0.0-0.0]", out)
        status, out, _ = self.run_main("--quick", "--reps", "3")
        self.assertIn("value  1.0 [0.0-2.0]", out)
        self.assertEqual(self.conformance_runs, [])  # a smoke run judges no conformance run
        self.assertNotIn("default conformance run", out)

    def test_bad_usage_exits_2(self):
        self.assertEqual(self.run_main("--trials", "0")[0], 2)
        self.assertEqual(self.run_main("--nope")[0], 2)

    def test_dispatch(self):
        self.assertIn("step", core.contracts())
        self.assertIn("crawler", core.contracts())
        self.assertNotIn("floor", core.contracts())
        self.assertIsNone(core.bench_class("core"))
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(core.dispatch(["nope"]), 2)
        self.assertIn("no bench for contract 'nope'", err.getvalue())


class ConformanceRunTest(unittest.TestCase):
    def test_a_run_is_timed_and_its_report_read(self):
        run = core.conformance_run("step", core.program(ToyBench.DEFAULT_NODE), ("--only", "node.*,exit.codes"))
        self.assertEqual(run["exit"], 0)
        self.assertEqual((run["checks"], run["passed"], run["failed"]), (5, 5, 0))  # the file named: static checks run
        self.assertGreater(run["wall_s"], 0)
        self.assertGreater(run["node_starts"], 0)
        self.assertGreater(run["interpreter_start_ms"], 0)

    def test_a_run_that_leaves_no_report_did_not_finish(self):
        run = core.conformance_run("no-such-contract", core.program(ToyBench.DEFAULT_NODE))
        self.assertIsNone(run["wall_s"])
        self.assertEqual(core.conformance_budget("step", run, cores=2)[2:], ("did not finish (exit 2)", False))

    def test_the_budget_is_45_s(self):
        for wall_s, met in ((45.0, True), (45.1, False), (12.0, True)):
            row = core.conformance_budget("scan", dict(FAKE_RUN, wall_s=wall_s), cores=2)
            self.assertEqual(row[0], "default conformance run (python3 -m conformance scan NODE), 2 cores")
            self.assertEqual(row[3], met)


class StopTrialsTest(unittest.TestCase):
    def test_interleaved_and_given_up(self):
        calls = []

        def run_one(case):
            calls.append(case)
            killed = case == "slow"
            return {"latency_s": None if killed else 0.01 * len(calls), "killed": killed,
                    "verdict": "no exit within 1 s" if killed else "exit 0"}
        with contextlib.redirect_stderr(io.StringIO()):
            records = core.stop_trials([("one", ["fast", "slow"]), ("two", ["fast"])], 3, run_one, give_up_after=2)
        self.assertEqual(calls, ["fast", "slow", "fast", "slow", "fast", "fast", "fast", "fast"])
        self.assertEqual([r["trial"] for r in records], [0, 0, 1, 1, 2, 0, 1, 2])
        slow = core.stop_summary([r for r in records if r["killed"]], 3)
        self.assertEqual((slow["trials"], slow["exited"], slow["median_s"], slow["gave_up"]), (2, 0, None, True))
        self.assertEqual(slow["verdicts"], {"no exit within 1 s": 2})
        fast = core.stop_summary(records[:5:2], 3)
        self.assertEqual((fast["exited"], fast["min_s"], fast["max_s"], fast["gave_up"]), (3, 0.01, 0.05, False))


class PiecesTest(unittest.TestCase):
    def test_cells_and_tables(self):
        stat = core.median_range([0.010, 0.030, 0.020])
        self.assertEqual(core.cell(stat, "%.0f", scale=1000.0), "20 [10-30]")
        self.assertEqual(core.cell(None, "%.1f"), "n/a")
        self.assertEqual(core.cell(None, "%.1f", missing="-"), "-")
        self.assertEqual(core.markdown_table(["a", "b"], [[1, "x"]]), ["| a | b |", "|---|---|", "| 1 | x |"])
        self.assertEqual(core.table(["a", "bb"], [["ccc", "d"]]), ["a    bb", "---  --", "ccc  d"])

    def test_alternating(self):
        self.assertEqual([core.alternating((1, 2, 3), rep) for rep in range(3)], [(1, 2, 3), (3, 2, 1), (1, 2, 3)])

    def test_footer(self):
        self.assertEqual(core.footer({"other_cpu_s": None}, 12.4), ["bench: finished in 12 s"])
        self.assertRegex(core.footer({"other_cpu_s": 3.0}, 10.0)[0],
                         r"^meanwhile, other processes on this machine used 3 CPU-s \(\d+% of \d+ cores for 10 s\)$")


if __name__ == "__main__":
    unittest.main()
