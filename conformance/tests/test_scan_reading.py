"""The scan worker reads what it receives as the upstream reads it (contract/scan.md, area PEER, D24 to D29).

Unit tests of the reference node's readers, imported as a module (importing it does nothing,
SCAN-NODE-3): whole numbers as the upstream's int() reads them, instants as fromisoformat()
reads them, the upstream's argv spellings, HOME as expanduser() finds it, and assignments with
members nobody defined.  The platform checks of area PEER judge the same through a running worker;
these pin the edges a plane cannot easily serve (HOME unset, every spelling of a number).

Run: python3 -m unittest conformance.tests.test_scan_reading -v
"""

import copy
import datetime
import json
import os
import pwd
import unittest

from conformance.tests import reference_node

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "contract", "examples", "scan", "valid")


node = reference_node.load_node("scan_worker", "reading")


def _example(name):
    with open(os.path.join(EXAMPLES, name + ".json"), encoding="utf-8") as handle:
        return json.load(handle)


class WholeNumbersTest(unittest.TestCase):
    """D25."""

    def test_the_forms_a_json_producer_writes(self):
        for value, wanted in [(12, 12), (12.0, 12), ("12", 12), ("0012", 12)]:
            with self.subTest(value=value):
                self.assertEqual(node.upstream_int(value), wanted)

    def test_a_fraction_is_cut_only_where_asked(self):
        self.assertIsNone(node.upstream_int(12.5))
        self.assertEqual(node.upstream_int(12.5, cut=True), 12)
        self.assertEqual(node.upstream_int(0.5, cut=True), 0)

    def test_what_names_something_else_is_refused(self):
        for value in (True, False, None, float("nan"), float("inf"), "1_0", " 7", "\u0661", "", "12.0", 2 ** 60,
                      [1], {"n": 1}):
            with self.subTest(value=value):
                self.assertIsNone(node.upstream_int(value))

    def test_a_header_number_is_int_itself(self):
        for text, wanted in [("5", 5), ("+5", 5), (" 05 ", 5), ("-1", -1), ("5.0", None), ("", None),
                             ("Wed, 21 Oct 2026 07:28:00 GMT", None), ("9" * 40, None), (None, None)]:
            with self.subTest(text=text):
                self.assertEqual(node.header_int(text), wanted)


class InstantsTest(unittest.TestCase):
    """D26: one instant, every spelling fromisoformat() (of any Python the worker runs on) reads."""

    MOMENT = datetime.datetime(2026, 12, 4, 20, 15, 0, 250000, tzinfo=datetime.timezone.utc).timestamp()

    def test_every_spelling_of_one_instant(self):
        for text in ["2026-12-04T20:15:00.250Z", "2026-12-04T20:15:00.25+00:00", "2026-12-04T20:15:00.250000",
                     "2026-12-04 20:15:00.250000+00:00", "2026-12-05T01:45:00.25+05:30",
                     "2026-12-04T15:15:00.250000-05:00", "2026-12-05T01:45:00.25+0530",
                     "2026-12-04T20:15:00.250000000Z", "2026-12-04T20:15:00,25Z"]:
            with self.subTest(text=text):
                self.assertAlmostEqual(node.read_instant(text), self.MOMENT, places=5)

    def test_what_is_no_instant(self):
        for value in ["soon", "2026-02-30T00:00:00Z", "2026-12-04T24:00:00Z", "", None, 1733343300,
                      "2026-12-04T20:15:00Z" + " " * 60]:
            with self.subTest(value=value):
                self.assertIsNone(node.read_instant(value))


class LaunchLineTest(unittest.TestCase):
    """D28, D29."""

    def setUp(self):
        self.exact = node.build_parser()._option_string_actions

    def test_the_upstreams_prefixes_are_written_out(self):
        argv = ["--serv", "https://x", "--tok=" + "t" * 20, "--p", "2", "--poll-seconds", "1"]
        self.assertEqual(node.upstream_spelling(argv, self.exact),
                         ["--server", "https://x", "--token=" + "t" * 20, "--parallelism", "2", "--poll-seconds",
                          "1"])

    def test_this_workers_own_options_and_values_are_left_alone(self):
        argv = ["--poll", "1", "--token-f", "x", "--", "--serv"]
        self.assertEqual(node.upstream_spelling(argv, self.exact), argv)

    def test_the_origin_as_the_upstream_reads_it(self):
        self.assertEqual(node.parse_origin("https://scan.example//")[0], "https://scan.example")
        self.assertEqual(node.parse_origin("https://b\u00fccher.example:8443")[0],
                         "https://xn--bcher-kva.example:8443")
        for bad in ("https://scan.example:0", "http://scan.example", "https://u@scan.example", "https://x/p"):
            with self.subTest(origin=bad):
                with self.assertRaises(node.UsageError):
                    node.parse_origin(bad)

    def test_home_unset_is_the_password_databases(self):
        home = pwd.getpwuid(os.getuid()).pw_dir
        if not os.path.isabs(home):
            self.skipTest("this user's password entry has no absolute home")
        state, bundles, work = node.tree_paths({})
        self.assertEqual(state, os.path.join(home, ".local/state", "truf", "remote-worker"))
        self.assertEqual(work, os.path.join(home, ".local/share", "truf", "remote-worker", "work"))

    def test_home_relative_or_empty_is_a_usage_error(self):
        for home in ("relative/home", ""):
            with self.subTest(home=home):
                with self.assertRaises(node.UsageError):
                    node.tree_paths({"HOME": home})


class AssignmentTest(unittest.TestCase):
    """SCAN-PEER-2, D33: what the worker reads of an assignment, whatever else it holds."""

    def test_the_upstreams_variety_reads_as_the_plain_one(self):
        plain = node.check_assignment(_example("assignment-one-target")["assignment"], node.CAPABILITIES)
        varied = node.check_assignment(_example("assignment-upstream-variety")["assignment"], node.CAPABILITIES)
        self.assertEqual(plain, varied)
        self.assertEqual(sorted(varied["targets"][0]), ["name", "sha256", "size", "url"])
        self.assertIsInstance(varied["reservation_id"], int)
        self.assertIsInstance(varied["declared_bundle_bytes"], int)

    def test_the_state_keeps_it_as_written_and_reads_it_back(self):
        doc = _example("assignment-upstream-variety")["assignment"]
        state = {"schema": 2, "phase": "assigned", "assignment": doc, "runner": None, "retained_work": []}
        self.assertIsNone(node.state_problem(state, 0))
        self.assertEqual(node.strict_object(node.canonical(state), "a state"), state)

    def test_a_fraction_where_a_number_names_something_is_refused(self):
        doc = copy.deepcopy(_example("assignment-one-target")["assignment"])
        doc["targets"][0]["size"] = 71.5
        with self.assertRaises(node.AssignmentIncompatible) as raised:
            node.check_assignment(doc, node.CAPABILITIES)
        self.assertEqual(raised.exception.member, "targets.size")

    def test_answers_refuse_only_what_d24_names(self):
        self.assertEqual(node.parse_object(b'{"a": 0.5, "b": {"c": [1, 2.5e3]}, "d": "\\u00e9"}')["a"], 0.5)
        for body in (b'{"a": 1, "a": 2}', b'{"a": NaN}', b'{"a": 99999999999999999999}', b'{"a": "\\ud800"}',
                     b"[" * 40 + b"]" * 40):
            with self.subTest(body=body[:30]):
                with self.assertRaises(node.WorkerClientError):
                    node.parse_object(body)


if __name__ == "__main__":
    unittest.main()
