"""What a run costs: node starts counted per check, CPU of the harness and of its nodes in the reports."""

import os
import threading
import unittest

from conformance import report
from conformance.checks import PASS, Check, NodeSpec, run_check
from conformance.checks._selftest.plane import ToyPlane
from conformance.clauses import REPO_ROOT

NODE = NodeSpec.from_path(os.path.join(REPO_ROOT, "conformance", "tests", "data", "toy_node.py"))


def make(run, check_id):
    return Check(check_id, "_selftest", "T", ["SELFTEST-GREET-1"], "MUST", "a test check", "", "", run)


class NodeStartsTest(unittest.TestCase):
    def test_each_start_of_the_node_is_counted_for_the_check_that_made_it(self):
        def twice(ctx):
            plane = ctx.use(ToyPlane(ctx))
            plane.run()
            plane.run()

        def never(ctx):
            pass

        results = [run_check(make(twice, "t.twice"), NODE), run_check(make(never, "t.never"), NODE)]
        self.assertEqual([r.verdict for r in results], [PASS, PASS])
        self.assertEqual([r.node_starts for r in results], [2, 0])
        run = report.RunReport("_selftest", "toy", 0, results, wall_s=1.0, cpu=(0.5, 1.5))
        self.assertIn("(2 checks in 1.0 s; 2 node starts; CPU 0.5 s harness, 1.5 s nodes)",
                      report.render_text(run))
        document = report.to_json(run)
        self.assertEqual([c["node_starts"] for c in document["checks"]], [2, 0])
        self.assertEqual(document["cpu_s"], {"harness": 0.5, "nodes": 1.5})

    def test_starts_made_by_a_check_in_another_thread_are_not_counted_for_this_one(self):
        def once(ctx):
            ctx.use(ToyPlane(ctx)).run()

        other = []
        thread = threading.Thread(target=lambda: other.append(run_check(make(once, "t.other"), NODE)))
        thread.start()
        mine = run_check(make(once, "t.mine"), NODE)
        thread.join()
        self.assertEqual((mine.node_starts, other[0].node_starts), (1, 1))


if __name__ == "__main__":
    unittest.main()
