"""Peer variety rewrites (conformance/dialect.py): the text changes, what the upstream reads does not."""

import datetime
import json
import unittest

from conformance import dialect

DOC = {"a": 1, "b": {"c": [{"d": 2}], "retry_after": 5, "flag": True}, "retry_after": 7}


class UnknownMembersTest(unittest.TestCase):
    def test_every_object_gains_the_member_and_keeps_its_own(self):
        varied = dialect.unknown_members(DOC)
        self.assertEqual(varied[dialect.UNKNOWN_MEMBER], dialect.UNKNOWN_VALUE)
        self.assertIn(dialect.UNKNOWN_MEMBER, varied["b"])
        self.assertIn(dialect.UNKNOWN_MEMBER, varied["b"]["c"][0])
        stripped = json.loads(json.dumps(varied), object_hook=lambda o: dict(
            (k, v) for k, v in o.items() if k != dialect.UNKNOWN_MEMBER))
        self.assertEqual(stripped, DOC)
        self.assertNotIn(dialect.UNKNOWN_MEMBER, DOC)  # the original is untouched

    def test_top_only(self):
        varied = dialect.unknown_members(DOC, top_only=True)
        self.assertIn(dialect.UNKNOWN_MEMBER, varied)
        self.assertNotIn(dialect.UNKNOWN_MEMBER, varied["b"])

    def test_a_present_member_is_kept(self):
        self.assertEqual(dialect.unknown_members({"x": 1}, name="x"), {"x": 1})


class FloatsTest(unittest.TestCase):
    def test_named_integers_become_floats_anywhere(self):
        varied = dialect.floats(DOC, {"retry_after", "flag"})
        self.assertEqual(json.dumps(varied["retry_after"]), "7.0")
        self.assertEqual(json.dumps(varied["b"]["retry_after"]), "5.0")
        self.assertIs(varied["b"]["flag"], True)  # a boolean is not a number here
        self.assertEqual(varied["a"], 1)
        self.assertIsInstance(varied["a"], int)

    def test_an_integer_without_an_exact_float_is_refused(self):
        with self.assertRaises(ValueError):
            dialect.floats({"n": 2 ** 53 + 1}, {"n"})


class InstantTest(unittest.TestCase):
    def test_every_form_is_the_same_instant(self):
        moment = datetime.datetime(2026, 12, 4, 20, 15, 0, 250000, tzinfo=datetime.timezone.utc)
        texts = dict((form, dialect.instant(moment, form)) for form in dialect.INSTANT_FORMS)
        self.assertEqual(texts["Z"], "2026-12-04T20:15:00.250000Z")
        self.assertEqual(texts["offset"], "2026-12-05T01:45:00.250000+05:30")
        self.assertEqual(texts["offset-fraction"], "2026-12-04T15:15:00.250000-05:00")
        for form, text in texts.items():
            parsed = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
            self.assertEqual(parsed, moment, form)
        whole = moment.replace(microsecond=0)
        self.assertEqual(dialect.instant(whole, "Z"), "2026-12-04T20:15:00Z")
        self.assertEqual(dialect.instant(whole, "fraction"), "2026-12-04T20:15:00.000000Z")

    def test_naive_and_unknown_are_refused(self):
        with self.assertRaises(ValueError):
            dialect.instant(datetime.datetime(2026, 1, 1), "Z")
        with self.assertRaises(ValueError):
            dialect.instant(datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc), "local")


if __name__ == "__main__":
    unittest.main()
