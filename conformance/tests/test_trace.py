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
        extra = text.replace("## Decisions", "### SELFTEST-GREET-9 (MUST) Nobody checks this\n\nText.\n\n"
                                             "### D7 Points nowhere\n\nSee SELFTEST-NOPE-1.\n\n## Decisions")
        extra = extra.replace("- D2 The greeting", "- D8 Cites SELFTEST-GONE-1.\n- D2 The greeting")
        with mock.patch.object(trace._clauses, "load", return_value=clauses.parse(extra, "_selftest", real.path)):
            status, out = run("_selftest")
        self.assertEqual(status, 1)
        self.assertIn("SELFTEST-GREET-9    (none)  <- HOLE", out)
        self.assertIn("MUST clause SELFTEST-GREET-9 (Nobody checks this) has no check", out)
        self.assertIn("decision D8 cites SELFTEST-GONE-1, which does not exist", out)

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

    def test_check_citing_unknown_clause_is_a_hole(self):
        real = clauses.load("_selftest")
        with open(real.path) as handle:
            text = handle.read()
        without = text.replace("### SELFTEST-REDACT-1 (MUST)", "### SELFTEST-REDACT-7 (MUST)")
        with mock.patch.object(trace._clauses, "load", return_value=clauses.parse(without, "_selftest", real.path)):
            status, out = run("_selftest")
        self.assertEqual(status, 1)
        self.assertIn("check redact.token cites SELFTEST-REDACT-1, which contract/_selftest.md does not define", out)

    def test_usage(self):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(run("no_such_contract")[0], 2)
        self.assertIn("unknown contract", err.getvalue())
        self.assertEqual(run("--bogus")[0], 2)
        self.assertEqual(run("--help")[0], 0)


if __name__ == "__main__":
    unittest.main()
