"""The order a run starts its checks in: the longest first (conformance/schedule.py)."""

import argparse
import json
import os
import shutil
import tempfile
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


if __name__ == "__main__":
    unittest.main()
