"""Traceability tables and their holes."""

import contextlib
import io
import unittest
from unittest import mock

from conformance import clauses, mutants, trace


def run(*names):
    out = io.StringIO()
    status = trace.main(list(names), out=out)
    return status, out.getvalue()


class TraceTest(unittest.TestCase):
    def test_selftest_has_no_hole(self):
        status, text = run("_selftest")
        self.assertEqual(status, 0, text)
        self.assertIn("MUST clause -> checks citing it", text)
        self.assertIn("SELFTEST-STOP-1     stop.sigterm-pid1", text)
        self.assertIn("SELFTEST-SCRATCH-2  MAY     (none)", text)  # shown, not a hole
        self.assertIn("node.import        import_side_effect", text)
        self.assertIn("D1    SELFTEST-STOP-1", text)
        self.assertEqual(text.splitlines()[-1], "trace: _selftest: no hole")

    def test_must_clause_without_check_is_a_hole(self):
        real = clauses.load("_selftest")
        with open(real.path) as handle:
            text = handle.read()
        extra = text.replace("## The toy's own work", "### SELFTEST-GREET-9 (MUST) Nobody checks this\n\nText.\n\n"
                                                       "## The toy's own work")
        extra = extra.replace("## Decisions", "## Decisions\n\n### D7 Points nowhere\n\nSee SELFTEST-NOPE-1.\n")
        extra = extra.replace("- D2 The greeting", "- D8 Cites SELFTEST-GONE-1.\n- D2 The greeting")
        with mock.patch.object(trace._clauses, "load", return_value=clauses.parse(extra, "_selftest", real.path)):
            status, out = run("_selftest")
        self.assertEqual(status, 1)
        self.assertIn("SELFTEST-GREET-9    (none)  <- HOLE", out)
        self.assertIn("MUST clause SELFTEST-GREET-9 (Nobody checks this) has no check", out)
        self.assertIn("decision D8 cites SELFTEST-GONE-1, which does not exist", out)

    def test_platform_clause_judged_only_by_example_checks_is_a_hole(self):
        real = clauses.load("_selftest")
        with open(real.path) as handle:
            text = handle.read()
        # Move the greeting clause into the example-work section: greet.hello becomes
        # an example check, and SELFTEST-STOP-1 (still platform) keeps its check.
        moved = text.replace("## Greeting (GREET)", "## Greeting (GREET) [example work]")
        with mock.patch.object(trace._clauses, "load", return_value=clauses.parse(moved, "_selftest", real.path)):
            status, out = run("_selftest")
        self.assertEqual(status, 0, out)   # every clause of an example section may be judged by example checks
        self.assertIn("greet.hello        wrong_greeting  [example work]", out)
        platform_only_by_example = text.replace(
            "### SELFTEST-WORK-1 (MUST) Says goodbye",
            "### SELFTEST-WORK-1 (MUST) Says goodbye\n\nText.\n\n### SELFTEST-WORK-2 (MUST) Also greets")
        platform_only_by_example = platform_only_by_example.replace(
            "## The toy's own work: a farewell [example work]", "## The toy's own work: a farewell")
        with mock.patch.object(trace._clauses, "load",
                               return_value=clauses.parse(platform_only_by_example, "_selftest", real.path)):
            status, out = run("_selftest")
        self.assertEqual(status, 1)
        self.assertIn("SELFTEST-WORK-2     (none)  <- HOLE", out)
        # Without the section mark, work.farewell is a platform check again: no hole for WORK-1.
        self.assertNotIn("platform clause SELFTEST-WORK-1", out)
        example_only = text.replace("## Greeting (GREET)", "## Greeting (GREET) [example work]").replace(
            "### SELFTEST-STOP-1 (MUST)", "### SELFTEST-GREET-3 (MUST) Greets again\n\nText.\n\n"
                                          "### SELFTEST-STOP-1 (MUST)")
        with mock.patch.object(trace._clauses, "load", return_value=clauses.parse(example_only, "_selftest", real.path)):
            with mock.patch.object(trace._checks, "set_scopes", side_effect=lambda c, items: [
                    setattr(i, "scope", trace._checks.EXAMPLE if i.id.startswith(("greet.", "stop.")) else
                            trace._checks.PLATFORM) for i in items]):
                status, out = run("_selftest")
        self.assertEqual(status, 1)
        self.assertIn("platform clause SELFTEST-STOP-1 (SIGTERM ends the run, also as PID 1) is cited only by "
                      "example-work checks", out)

    def test_check_without_mutant_and_bad_mutants_are_holes(self):
        shipped = mutants.load_all("_selftest")
        kept = [m for m in shipped if m.name != "wrong_greeting"]
        ghost = mutants.Mutant("ghost", "ghost.py", "d", "n.py", [("a", "b")], ["no.such-check"])
        broken = mutants.Mutant("broken", "broken.py", problem="KILLS must be a non-empty list of check IDs")
        with mock.patch.object(trace._mutants, "load_all", return_value=kept + [ghost, broken]):
            status, out = run("_selftest")
        self.assertEqual(status, 1)
        self.assertIn("greet.hello        (none)  <- HOLE", out)
        self.assertIn("check greet.hello has no mutant", out)
        self.assertIn("mutant ghost names no.such-check, which is not a check", out)
        self.assertIn("mutant broken is malformed", out)
        self.assertTrue(out.splitlines()[-1].startswith("trace: _selftest: 3 holes"))

    def test_decision_may_cite_another_contracts_clause(self):
        real = clauses.load("_selftest")
        with open(real.path) as handle:
            text = handle.read()
        extra = text.replace("## Decisions", "## Decisions\n\n### D7 Builds on the step contract\n\n"
                                             "As STEP-STOP-2 does; and STEP-STOP-99, which does not exist.\n")
        load = clauses.load
        with mock.patch.object(trace._clauses, "load", side_effect=lambda name: (
                clauses.parse(extra, "_selftest", real.path) if name == "_selftest" else load(name))):
            status, out = run("_selftest")
        self.assertEqual(status, 1, out)
        self.assertIn("D7    STEP-STOP-2, STEP-STOP-99", out)
        self.assertIn("decision D7 cites STEP-STOP-99, which does not exist", out)
        self.assertNotIn("decision D7 cites STEP-STOP-2,", out)

    def test_check_citing_unknown_clause_is_a_hole(self):
        real = clauses.load("_selftest")
        with open(real.path) as handle:
            text = handle.read()
        without = text.replace("### SELFTEST-REDACT-1 (MUST)", "### SELFTEST-REDACT-7 (MUST)")
        with mock.patch.object(trace._clauses, "load", return_value=clauses.parse(without, "_selftest", real.path)):
            status, out = run("_selftest")
        self.assertEqual(status, 1)
        self.assertIn("check redact.token cites SELFTEST-REDACT-1, which contract/_selftest.md does not define", out)

    def test_contract_in_progress_lists_missing_coverage_as_planned(self):
        # A contract whose checks are still being written: a MUST clause without a check and a
        # check without a mutant are planned work; a mutant naming no check is still a hole.
        shipped = mutants.load_all("_selftest")
        kept = [m for m in shipped if m.name != "wrong_greeting"]
        real = clauses.load("_selftest")
        with open(real.path) as handle:
            text = handle.read()
        extra = text.replace("## The toy's own work", "### SELFTEST-GREET-9 (MUST) Nobody checks this\n\nText.\n\n"
                                                       "## The toy's own work")
        parsed = clauses.parse(extra, "_selftest", real.path)
        reason = "issue 99: checks being written"
        with mock.patch.object(trace._mutants, "load_all", return_value=kept), \
                mock.patch.object(trace._clauses, "load", return_value=parsed), \
                mock.patch.object(trace._checks, "in_progress", return_value=reason):
            status, out = run("_selftest")
            self.assertEqual(status, 0, out)
            self.assertIn("SELFTEST-GREET-9    (none)  <- planned", out)
            self.assertIn("greet.hello        (none)  <- planned", out)
            self.assertIn("planned for _selftest (2; in progress: %s):" % reason, out)
            self.assertIn("  - check greet.hello has no mutant", out)
            self.assertEqual(out.splitlines()[-1], "trace: _selftest: no hole (_selftest: 2 planned)")
            ghost = mutants.Mutant("ghost", "ghost.py", "d", "n.py", [("a", "b")], ["no.such-check"])
            with mock.patch.object(trace._mutants, "load_all", return_value=kept + [ghost]):
                status, out = run("_selftest")
            self.assertEqual(status, 1, out)
            self.assertIn("mutant ghost names no.such-check, which is not a check", out)
        # The same gaps without IN_PROGRESS are holes (see the tests above); the real packages:
        self.assertIsNone(trace._checks.in_progress("_selftest"))

    def test_usage(self):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(run("no_such_contract")[0], 2)
        self.assertIn("unknown contract", err.getvalue())
        self.assertEqual(run("--bogus")[0], 2)
        self.assertEqual(run("--help")[0], 0)


if __name__ == "__main__":
    unittest.main()
