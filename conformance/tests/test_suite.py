"""The project's test driver (conformance/suite.py): shards cover every test module once, counts add up."""

import os
import unittest

from conformance import suite


class ShardTest(unittest.TestCase):
    def test_every_test_module_is_in_exactly_one_shard(self):
        modules = sorted("conformance.tests." + name[:-3] for name in os.listdir(os.path.dirname(__file__))
                         if name.startswith("test_") and name.endswith(".py"))
        sharded = [arg for argv in suite.unit_test_shards(2) for arg in argv[3:]]
        self.assertEqual(sorted(sharded), modules)
        self.assertEqual(len(suite.unit_test_shards(2)), 2)

    def test_counts_add_up_over_shards_and_a_broken_shard_fails(self):
        one = "....\n----\nRan 10 tests in 1.0s\n\nOK (skipped=2)\n"
        two = "F.\n----\nRan 5 tests in 1.0s\n\nFAILED (failures=1, errors=1)\n"
        counts = suite.unittest_counts(1, suite.SHARD_BREAK.join([one, two]))
        self.assertEqual((counts.passed, counts.failed, counts.skipped), (11, 2, 2))
        crashed = suite.unittest_counts(1, suite.SHARD_BREAK.join([one, "Traceback: ImportError\n"]))
        self.assertEqual(crashed.failed, 1)
        # A line "OK" printed by a test before the closing lines does not count as a shard's end.
        noisy = suite.unittest_counts(0, "OK\n" + one)
        self.assertEqual((noisy.passed, noisy.skipped), (8, 2))


if __name__ == "__main__":
    unittest.main()
