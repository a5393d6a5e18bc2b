"""The _worker self-test contract end to end: the toy worker passes, every mutant is killed, no hole.

Each check of the contract proves one facility the long-lived contracts need
(conformance/timeline.py, lifecycle.py, timescale.py); each mutant of the
toy worker breaks the behaviour one of them must catch.
"""

import contextlib
import io
import os
import unittest

from conformance import checks, cli, mutants, trace

TOY_WORKER = os.path.join("conformance", "tests", "data", "toy_worker.py")
CHECKS = {"node.stdlib", "node.help", "node.import", "stop.sigterm", "state.crash-resume", "poll.interval",
          "idle.cpu"}


class WorkerContractTest(unittest.TestCase):
    def test_registered_as_a_private_contract(self):
        loaded = {c.id: c for c in checks.load("_worker")}
        self.assertEqual(set(loaded), CHECKS - {"node.stdlib", "node.help", "node.import"})
        self.assertEqual(loaded["poll.interval"].clauses, ("WORKER-POLL-1", "WORKER-BEAT-1"))
        self.assertEqual(loaded["state.crash-resume"].area, "STATE")
        self.assertIn("_worker", checks.contracts(include_private=True))
        self.assertNotIn("_worker", checks.contracts())

    def test_the_toy_worker_passes(self):
        out = io.StringIO()
        with contextlib.redirect_stderr(io.StringIO()):
            status = cli.main(["_worker", TOY_WORKER, "--jobs", "4"], out=out)
        self.assertEqual(status, 0, out.getvalue())
        self.assertEqual(out.getvalue().splitlines()[-1], "conformance: 7 passed, 0 failed, 0 not judged, 0 skipped")

    def test_every_mutant_is_killed_by_the_check_it_names(self):
        out = io.StringIO()
        status = mutants.run_mutants("_worker", jobs=4, out=out)
        text = out.getvalue()
        self.assertEqual(status, 0, text)
        self.assertEqual(text.splitlines()[-1], "mutants: 8 passed, 0 failed")
        for check_id, mutant in [("idle.cpu", "busy_wait"), ("poll.interval", "ignores_poll_interval"),
                                 ("state.crash-resume", "new_claim_after_restart, reclaims_on_resume"),
                                 ("stop.sigterm", "polls_after_sigterm")]:
            self.assertRegex(text, r"\n  %s +%s\n" % (check_id.replace(".", r"\."), mutant))
        self.assertNotIn("(none)", text)

    def test_traceability_has_no_hole(self):
        out = io.StringIO()
        status = trace.main(["_worker"], out=out)
        self.assertEqual(status, 0, out.getvalue())
        self.assertEqual(out.getvalue().splitlines()[-1], "trace: _worker: no hole")


if __name__ == "__main__":
    unittest.main()
