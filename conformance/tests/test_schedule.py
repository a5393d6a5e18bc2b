"""The order a run starts its checks in, the longest first, and how many run at once (conformance/schedule.py)."""

import argparse
import json
import os
import shutil
import tempfile
import threading
import time
import unittest

from conformance import checks, cli, schedule, static
from conformance.checks import Check, NodeSpec
from conformance.clauses import REPO_ROOT

NODE = NodeSpec.from_path(os.path.join(REPO_ROOT, "conformance", "tests", "data", "toy_node.py"))


def make(run, check_id):
    return Check(check_id, "_selftest", "T", ["SELFTEST-GREET-1"], "MUST", "a test check", "", "", run)


class OrderTest(unittest.TestCase):
    def setUp(self):
        saved = dict(schedule.EXPECTED_S)
        self.addCleanup(lambda: (schedule.EXPECTED_S.clear(), schedule.EXPECTED_S.update(saved)))

    def test_the_longest_expected_check_is_submitted_first_and_reported_in_selection_order(self):
        started = []

        def note(ctx):
            started.append(ctx.check.id)

        selected = [make(note, "t.short"), make(note, "t.unknown"), make(note, "t.long"), make(note, "t.middle")]
        schedule.EXPECTED_S["_selftest"] = {"t.long": 9.0, "t.middle": 3.0, "t.short": 1.0}
        options = argparse.Namespace(jobs=1, repeat=1, seed=0, verbose=False, strict=False, pid1=True,
                                     full_waits=False)
        results = cli.run_all(selected, NODE, options)
        self.assertEqual(started, ["t.long", "t.middle", "t.short", "t.unknown"])
        self.assertEqual([r.id for r in results], ["t.short", "t.unknown", "t.long", "t.middle"])

    def test_the_table_is_rewritten_from_json_reports(self):
        scratch = tempfile.mkdtemp(prefix="conformance-schedule-test-")
        self.addCleanup(shutil.rmtree, scratch, True)
        path = os.path.join(scratch, "run.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"contract": "_selftest", "checks": [{"id": "a", "duration_s": 4.24},
                                                           {"id": "b", "duration_s": 0.2}]}, handle)
        table = schedule.table_from_reports([path])
        self.assertEqual(table, {"_selftest": {"a": 4.2}})
        namespace = {}
        exec(schedule.render_table(table), namespace)
        self.assertEqual(namespace["EXPECTED_S"], table)

    def test_every_listed_check_exists(self):
        # A renamed check left in the table would only lose its place; the test names it for the refresh.
        for contract, listed in schedule.EXPECTED_S.items():
            known = set(c.id for c in checks.load(contract))
            known.update(c.id for c in static.checks_for(contract))
            stale = sorted(set(listed) - known)
            self.assertEqual(stale, [], "%s: refresh conformance/schedule.py (see its docstring)" % contract)


class GovernorTest(unittest.TestCase):
    class Quick(schedule.Governor):
        ADMIT_WINDOW_S = 0.05

    def fill(self, governor, tries):
        """How many of `tries` admissions got through within a few windows (each admitted one stays running)."""
        admitted = []

        def attempt():
            governor.admit()
            admitted.append(1)

        threads = [threading.Thread(target=attempt, daemon=True) for _ in range(tries)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 0.5
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return len(admitted)

    def ticks(self, idle_share):
        clock = [0]

        def read():
            clock[0] += 100
            return (int(clock[0] * idle_share), clock[0])
        return read

    def test_beyond_the_floor_only_while_the_cpus_idle_and_never_beyond_the_ceiling(self):
        cpus = schedule._usable_cpus()
        self.assertEqual(self.fill(self.Quick(2, 5, idle_reader=self.ticks(1.0)), 8), 5)
        self.assertEqual(self.fill(self.Quick(2, 5, idle_reader=self.ticks(0.0)), 8), 2)
        busy = (schedule.Governor.ADMIT_IDLE_CPUS - 0.05) / cpus   # just under the idle CPU it asks for
        self.assertEqual(self.fill(self.Quick(2, 5, idle_reader=self.ticks(busy)), 8), 2)

    def test_an_explicit_jobs_is_a_fixed_pool(self):
        self.assertEqual(self.fill(self.Quick(3, 3, idle_reader=self.ticks(1.0)), 6), 3)

    def test_a_release_lets_the_next_check_start(self):
        governor = self.Quick(1, 1, idle_reader=self.ticks(0.0))
        governor.admit()
        waiter = threading.Thread(target=governor.admit, daemon=True)
        waiter.start()
        waiter.join(0.2)
        self.assertTrue(waiter.is_alive())
        governor.release()
        waiter.join(1.0)
        self.assertFalse(waiter.is_alive())

    def test_the_default_run_may_grow_an_explicit_jobs_may_not(self):
        from conformance.clauses import REPO_ROOT as root
        toy = os.path.join(root, "conformance", "tests", "data", "toy_node.py")
        options, _node = cli.parse(["_selftest", toy])
        self.assertEqual((options.jobs, options.jobs_ceiling), (cli.default_jobs(), cli.IDLE_CEILING_FACTOR * cli.default_jobs()))
        options, _node = cli.parse(["_selftest", toy, "--jobs", "3"])
        self.assertEqual((options.jobs, options.jobs_ceiling), (3, 3))


if __name__ == "__main__":
    unittest.main()
