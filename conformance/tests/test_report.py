"""Reports: terminal tree, summary line, --json, --junit."""

import json
import os
import re
import tempfile
import unittest
import xml.etree.ElementTree as ET

from conformance import report
from conformance.checks import ERROR, FAIL, NON_STRICT, NOT_JUDGED, PASS, SKIP, Check, CheckResult

SUMMARY = re.compile(r"^conformance: \d+ passed, \d+ failed, \d+ not judged, \d+ skipped$")


def result(check_id, verdict, area="GREET", clauses=("SELFTEST-GREET-1",), level="MUST", **fields):
    item = Check(check_id, "_selftest", area, list(clauses), level, "title of %s" % check_id, "", "", None)
    made = CheckResult(item, verdict, 0.25, repro="python3 -m conformance _selftest n.py --only %s --seed 0" % check_id,
                       transcript=["  0.001 did a thing"], **fields)
    return made


def sample():
    return report.RunReport("_selftest", "n.py", 0, [
        result("node.stdlib", PASS, area="NODE", clauses=("SELFTEST-NODE-1",)),
        result("greet.hello", FAIL, expected="a greeting", actual="nothing", diagnosis="it did not greet"),
        result("greet.progress", NON_STRICT, clauses=("SELFTEST-GREET-2",), level="SHOULD",
               expected="progress", actual="none"),
        result("stop.sigterm-pid1", SKIP, area="STOP", clauses=("SELFTEST-STOP-1",), reason="no PID namespace"),
        result("redact.token", ERROR, area="REDACT", clauses=("SELFTEST-REDACT-1",), expected="harness runs",
               actual="KeyError", reason="KeyError: 'x'"),
        result("greet.extra", PASS, clauses=("SELFTEST-GREET-99",)),
    ], wall_s=1.5, notes=["PID 1: yes"])


class CountTest(unittest.TestCase):
    def test_counts_and_summary(self):
        numbers = report.counts(sample().results)
        self.assertEqual((numbers["passed"], numbers["failed"], numbers["skipped"]), (3, 2, 1))
        self.assertEqual(numbers[ERROR], 1)
        self.assertEqual(report.summary_line(numbers), "conformance: 3 passed, 2 failed, 0 not judged, 1 skipped")
        self.assertRegex(report.summary_line(numbers), SUMMARY)

    def test_exit_status(self):
        self.assertEqual(report.exit_status(sample().results), 1)
        self.assertEqual(report.exit_status([result("a", PASS), result("b", NON_STRICT), result("c", SKIP)]), 0)
        self.assertEqual(report.exit_status([result("a", ERROR)]), 1)


class NotJudgedTest(unittest.TestCase):
    """A check the hang breaker cut is its own verdict: counted apart, listed with its rerun line, not green."""

    def run_report(self):
        return report.RunReport("_selftest", "n.py", 0, [
            result("greet.hello", PASS),
            result("stop.sigterm-pid1", NOT_JUDGED, area="STOP", clauses=("SELFTEST-STOP-1",),
                   reason="the node had already hung in 3 other checks (a, b, c)"),
            result("redact.token", SKIP, area="REDACT", clauses=("SELFTEST-REDACT-1",), reason="no PID namespace"),
        ])

    def test_counted_on_the_last_line_and_not_green(self):
        numbers = report.counts(self.run_report().results)
        self.assertEqual(report.summary_line(numbers), "conformance: 1 passed, 0 failed, 1 not judged, 1 skipped")
        self.assertEqual(report.exit_status(self.run_report().results), 1)

    def test_every_report_lists_it_with_its_rerun_line(self):
        run = self.run_report()
        text = report.render_text(run)
        self.assertIn("  NOT-JUDGED stop.sigterm-pid1", text)
        self.assertIn("Why:       the node had already hung in 3 other checks", text)
        self.assertIn("Rerun:     python3 -m conformance _selftest n.py --only stop.sigterm-pid1 --seed 0", text)
        self.assertIn("(1 not judged:", text)
        entry = [c for c in report.to_json(run)["checks"] if c["id"] == "stop.sigterm-pid1"][0]
        self.assertEqual((entry["verdict"], entry["repro"][-33:]), ("NOT-JUDGED", "--only stop.sigterm-pid1 --seed 0"))
        suite = report.to_junit(run).getroot().find("testsuite")
        self.assertEqual((suite.get("errors"), suite.get("skipped")), ("1", "1"))
        case = [c for c in suite.findall("testcase") if c.get("name") == "stop.sigterm-pid1"][0]
        self.assertEqual(case.find("error").get("type"), "not-judged")
        from conformance import report_html
        page = report_html.render_html(run)
        self.assertIn("What did not pass (1)", page)
        self.assertIn("--only stop.sigterm-pid1", page)


class CauseTest(unittest.TestCase):
    """One invariant broken in several checks is said once, as their cause, with its own clause."""

    def run_report(self):
        from conformance.invariants import Violation
        leak = Violation("SELFTEST-REDACT-1: no token in output", "no token anywhere", "CANA... in stderr",
                         "mask credentials before printing them")
        only = result("greet.progress", FAIL, clauses=("SELFTEST-GREET-2",), level="SHOULD",
                      expected="invariant x", actual="CANA... in stderr")
        only.violations, only.own_failure = [leak], False
        both = result("greet.hello", FAIL, expected="a greeting", actual="nothing", diagnosis="it did not greet")
        both.violations, both.own_failure = [leak], True
        return report.RunReport("_selftest", "n.py", 0, [result("node.stdlib", PASS, area="NODE"), both, only])

    def test_grouped_by_invariant_with_its_clause(self):
        found = report.causes(self.run_report().results)
        self.assertEqual([(c.number, c.clause_id, c.check_ids()) for c in found],
                         [(1, "SELFTEST-REDACT-1", ["greet.hello", "greet.progress"])])

    def test_terminal_says_it_once_and_cards_point_to_it(self):
        text = report.render_text(self.run_report())
        self.assertEqual(text.count("Cause 1: SELFTEST-REDACT-1: no token in output  (2 checks)"), 1)
        self.assertIn("Cause:     see cause 1 below (SELFTEST-REDACT-1: no token in output)", text)
        self.assertIn("Also:      cause 1 below", text)
        self.assertEqual(text.count("SELFTEST-GREET-2 (SHOULD)"), 0)   # the invariant-only card quotes no clause
        self.assertEqual(text.count("SELFTEST-REDACT-1 (MUST) The token is never shown"), 1)
        self.assertIn("Checks:    greet.hello, greet.progress", text)
        unmet = text[text.index("Clauses not met"):]
        self.assertIn("SELFTEST-REDACT-1  cause 1 (2 checks)", unmet)
        self.assertIn("SELFTEST-GREET-1   greet.hello", unmet)
        self.assertNotIn("SELFTEST-GREET-2", unmet)   # greet.progress failed only through the cause

    def test_json_and_junit_name_it(self):
        run = self.run_report()
        document = report.to_json(run)
        self.assertEqual(document["causes"][0]["checks"], ["greet.hello", "greet.progress"])
        self.assertEqual(document["causes"][0]["clause"], "SELFTEST-REDACT-1")
        entry = [c for c in document["checks"] if c["id"] == "greet.progress"][0]
        self.assertEqual((entry["causes"], entry["own_failure"]), ([1], False))
        case = [c for c in report.to_junit(run).getroot().iter("testcase") if c.get("name") == "greet.progress"][0]
        self.assertIn("cause 1: invariant SELFTEST-REDACT-1: no token in output", case.find("failure").text)


class TextTest(unittest.TestCase):
    def test_tree_with_failure_details(self):
        text = report.render_text(sample())
        lines = text.splitlines()
        self.assertRegex(lines[-1], SUMMARY)
        self.assertEqual(lines[-1], "conformance: 3 passed, 2 failed, 0 not judged, 1 skipped")
        self.assertIn("(1 error: harness faults, not the node's; counted as failed)", text)
        self.assertIn("(1 non-strict:", text)
        # sections from the contract's headings, in order of first appearance
        headings = [line for line in lines if line and not line.startswith(" ") and not line.startswith("(")]
        self.assertEqual(headings[1:5], ["Node file (NODE)", "Greeting (GREET)", "Cancellation (STOP)",
                                         "Secrets (REDACT)"])
        # clause text comes from the contract document, not from the check
        self.assertIn("The node prints the line `hello, <name>` on stdout", text)
        self.assertIn("SELFTEST-GREET-1 (MUST) Greets on stdout", text)
        self.assertIn("Expected:  a greeting", text)
        self.assertIn("Actual:    nothing", text)
        self.assertIn("Diagnosis: it did not greet", text)
        self.assertIn("Rerun:     python3 -m conformance _selftest n.py --only greet.hello --seed 0", text)
        self.assertIn("(no PID namespace)", text)
        self.assertNotIn("did a thing", text)
        self.assertIn("did a thing", report.render_text(sample(), verbose=True))

    def test_unknown_clause_and_unknown_contract(self):
        run = report.RunReport("_selftest", "n.py", 0, [result("greet.extra", FAIL, clauses=("SELFTEST-GREET-99",),
                                                               expected="e", actual="a")])
        self.assertIn("SELFTEST-GREET-99: (not found in contract/_selftest.md)", report.render_text(run))
        other = report.RunReport("no_doc_contract", "n.py", 0, [result("x.y", PASS, area="XY")])
        text = report.render_text(other)
        self.assertIn("\nXY\n", text)
        self.assertRegex(text.splitlines()[-1], SUMMARY)

    def test_stability_label(self):
        flaky = result("greet.hello", FAIL, expected="e", actual="a")
        flaky.runs, flaky.stability = [PASS, FAIL, PASS], "flaky"
        text = report.render_text(report.RunReport("_selftest", "n.py", 0, [flaky], repeat=3))
        self.assertIn("[flaky: FAIL 1, PASS 2]", text)


class FileTest(unittest.TestCase):
    def test_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.json")
            report.write_json(sample(), path)
            with open(path) as handle:
                document = json.load(handle)
        self.assertEqual(document["contract"], "_selftest")
        self.assertEqual(document["node"], "n.py")
        self.assertEqual(document["summary"][FAIL], 1)
        self.assertEqual(document["summary"]["failed"], 2)
        by_id = dict((c["id"], c) for c in document["checks"])
        failed = by_id["greet.hello"]
        for key in ("id", "clauses", "level", "title", "verdict", "duration_s", "expected", "actual", "repro",
                    "transcript"):
            self.assertIn(key, failed)
        self.assertEqual(failed["clauses"], ["SELFTEST-GREET-1"])
        self.assertNotIn("transcript", by_id["node.stdlib"])
        self.assertEqual(by_id["stop.sigterm-pid1"]["reason"], "no PID namespace")
        self.assertIn("transcript", by_id["greet.progress"])

    def test_junit(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.xml")
            report.write_junit(sample(), path)
            tree = ET.parse(path)
        suite = tree.getroot().find("testsuite")
        self.assertEqual(suite.get("name"), "_selftest")
        self.assertEqual((suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")),
                         ("6", "1", "1", "1"))
        cases = dict((c.get("name"), c) for c in suite.findall("testcase"))
        self.assertIsNotNone(cases["greet.hello"].find("failure"))
        self.assertIsNotNone(cases["redact.token"].find("error"))
        self.assertIsNotNone(cases["stop.sigterm-pid1"].find("skipped"))
        self.assertIsNone(cases["node.stdlib"].find("failure"))
        self.assertIn("NON-STRICT", cases["greet.progress"].find("system-out").text)
        self.assertEqual(cases["greet.hello"].get("classname"), "_selftest.GREET")


if __name__ == "__main__":
    unittest.main()
