"""Scaled time and the interval rule (conformance/timescale.py)."""

import math
import unittest

from conformance import timescale
from conformance.checks import CheckFailed
from conformance.timescale import (INTERVAL_FLOOR_S, MIN_JUDGED_INTERVAL_S, expect_interval, judge_intervals,
                                   scaled, tolerance)


class ScaleTest(unittest.TestCase):
    def test_scaled_keeps_ratios(self):
        self.assertAlmostEqual(scaled(6.0), 6.0 * timescale.TIME_SCALE)
        self.assertAlmostEqual(scaled(30.0) / scaled(10.0), 3.0)

    def test_whole_seconds_round_up_to_at_least_one(self):
        self.assertEqual(scaled(1.0, whole_seconds=True), 1)
        for contract_s in (25.0, 30.0, 35.0):
            self.assertEqual(scaled(contract_s, whole_seconds=True),
                             max(1, math.ceil(round(contract_s * timescale.TIME_SCALE, 9))))
        self.assertIsInstance(scaled(120.0, whole_seconds=True), int)


class ToleranceTest(unittest.TestCase):
    def test_floor_then_relative(self):
        self.assertEqual(tolerance(0.2), INTERVAL_FLOOR_S)
        self.assertEqual(tolerance(0.6), INTERVAL_FLOOR_S)           # 40 % of 0.6 is 0.24 < the floor
        self.assertAlmostEqual(tolerance(2.0), 0.8)
        self.assertAlmostEqual(tolerance(10.0), 4.0)

    def test_half_and_double_always_fail_from_the_shortest_judged_interval(self):
        for nominal in (MIN_JUDGED_INTERVAL_S, 0.8, 1.0, 3.0, 30.0):
            with self.subTest(nominal=nominal):
                self.assertFalse(judge_intervals([nominal / 2] * 4, nominal).ok)
                self.assertFalse(judge_intervals([nominal * 2] * 4, nominal).ok)
                self.assertTrue(judge_intervals([nominal] * 4, nominal).ok)
                # +-20 % timer jitter passes.
                self.assertTrue(judge_intervals([nominal * 0.8, nominal * 1.2] * 2, nominal).ok)

    def test_shorter_intervals_are_refused_not_judged(self):
        with self.assertRaises(ValueError) as raised:
            judge_intervals([0.1, 0.1], 0.2)
        self.assertIn("MIN_JUDGED_INTERVAL_S", str(raised.exception))
        self.assertTrue(judge_intervals([0.2, 0.21], 0.2, tol=0.05).ok)   # unless the caller states a tolerance
        self.assertTrue(judge_intervals([0.6], scaled(6.0)).ok)           # 6 x 0.1 is not refused for rounding


class RuleTest(unittest.TestCase):
    NOMINAL = 0.6   # tolerance 0.25: bounds 0.35..0.85

    def judge(self, gaps):
        return judge_intervals(gaps, self.NOMINAL)

    def test_bounds(self):
        verdict = self.judge([0.6])
        self.assertAlmostEqual(verdict.low, 0.35)
        self.assertAlmostEqual(verdict.high, 0.85)

    def test_loaded_machine_lengthens_a_few(self):
        self.assertTrue(self.judge([0.61, 0.65, 0.62, 0.60]).ok)
        self.assertTrue(self.judge([0.61, 1.40, 0.62, 0.60]).ok)           # one stall in four
        self.assertTrue(self.judge([0.84, 0.36, 0.61, 0.60]).ok)           # a late one, then a catch-up

    def test_any_interval_too_short_fails(self):
        verdict = self.judge([0.6, 0.6, 0.30, 0.6])
        self.assertFalse(verdict.ok)
        self.assertIn("1 of 4 intervals shorter than 0.350 s", verdict.reason)

    def test_median_outside_fails(self):
        verdict = self.judge([0.9, 0.9, 0.84])
        self.assertFalse(verdict.ok)
        self.assertIn("median 0.900 s outside", verdict.reason)

    def test_too_many_stretched_fails(self):
        verdict = self.judge([0.6, 1.2, 1.3, 0.6, 0.6, 0.6, 0.6, 0.6])     # 2 of 8 may be; 2 are
        self.assertTrue(verdict.ok, verdict)
        verdict = self.judge([0.6, 1.2, 1.3, 0.6, 0.6, 0.6, 1.1])          # 1 of 7 may be; 3 are
        self.assertFalse(verdict.ok)
        self.assertIn("3 of 7 intervals longer than 0.850 s (at most 1 may be)", verdict.reason)

    def test_nothing_observed_fails(self):
        verdict = self.judge([])
        self.assertFalse(verdict.ok)
        self.assertEqual(verdict.reason, "no interval was observed")

    def test_a_single_number(self):
        self.assertTrue(judge_intervals(0.7, self.NOMINAL).ok)
        self.assertFalse(judge_intervals(0.2, self.NOMINAL).ok)


class ExpectTest(unittest.TestCase):
    class Ctx:
        def expect(self, cond, expected, actual, diagnosis=None):
            if not cond:
                raise CheckFailed(expected, actual() if callable(actual) else actual, diagnosis)

    def test_passes_quietly_and_fails_with_the_numbers(self):
        self.assertTrue(expect_interval(self.Ctx(), [0.6, 0.62], 0.6, what="GET /poll").ok)
        with self.assertRaises(CheckFailed) as raised:
            expect_interval(self.Ctx(), [0.2, 0.21], 0.6, what="GET /poll", diagnosis="ignores the interval")
        failure = raised.exception
        self.assertEqual(failure.expected, "GET /poll every 0.600 s (0.350..0.850 s by the interval rule, "
                                           "conformance/timescale.py)")
        self.assertEqual(failure.actual, "2 of 2 intervals shorter than 0.350 s (shortest 0.200 s): "
                                         "median 0.205 s; intervals [0.200, 0.210] s")
        self.assertEqual(failure.diagnosis, "ignores the interval")


if __name__ == "__main__":
    unittest.main()
