"""The crawler's deployment constants added by issue 20 (contract/crawler.md, D21).

conformance/tests/test_deployment.py judges the first four (the result bound,
the media type, the child's variable, the child codes). The request's and the
result's schema strings, the failure bundle's and the request bound are
guesses too (the upstream imports them from `hosted_crawler_protocol`, which
is not in the seed), so a node deployed where they differ must pass with
--deploy and fail without; and the fakes must read the values at call time.
"""

import os
import unittest

from conformance import checks as _checks
from conformance.planes import crawler_docs as docs
from conformance.tests.deployed_node import judge_with_and_without

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE = os.path.join(ROOT, "nodes", "crawler_job.py")

# (line of section 2, its replacement, the --deploy assignment)
OTHER_VALUES = [
    ('REQUEST_SCHEMA = "mostlyright-crawler-request.v3"', 'REQUEST_SCHEMA = "example-crawler-request.v4"',
     "REQUEST_SCHEMA=example-crawler-request.v4"),
    ('RESULT_SCHEMA = "mostlyright-crawler-result.v3"', 'RESULT_SCHEMA = "example-crawler-result.v4"',
     "RESULT_SCHEMA=example-crawler-result.v4"),
    ('FAILURE_SCHEMA = "mostlyright-crawler-failure.v1"', 'FAILURE_SCHEMA = "example-crawler-failure.v2"',
     "FAILURE_SCHEMA=example-crawler-failure.v2"),
    ("MAX_CRAWLER_REQUEST_BYTES = 64 * 1024", "MAX_CRAWLER_REQUEST_BYTES = 128 * 1024",
     "MAX_CRAWLER_REQUEST_BYTES=131072"),
]
# A success (the request's and the result's schema), a failure bundle (its
# schema) and the :redeem bound (the request bound plus 48 KiB): each of the
# three fails for a node whose values the harness does not share.
SENSITIVE_CHECKS = ["report.success", "report.bundle", "boot.oversize"]


class CrawlerDeploymentSettingsTest(unittest.TestCase):
    def setUp(self):
        self.deployment = _checks.deployment("crawler")
        self.addCleanup(self.deployment.reset)

    def test_defaults_are_the_contracts(self):
        self.assertEqual((docs.REQUEST_SCHEMA, docs.RESULT_SCHEMA, docs.FAILURE_SCHEMA),
                         ("mostlyright-crawler-request.v3", "mostlyright-crawler-result.v3",
                          "mostlyright-crawler-failure.v1"))
        self.assertEqual((docs.MAX_CRAWLER_REQUEST_BYTES, docs.MAX_BOOTSTRAP_RESPONSE_BYTES), (65536, 114688))

    def test_set_rebinds_what_the_fakes_build_and_reset_restores_it(self):
        self.deployment.set([item[2] for item in OTHER_VALUES])
        request = docs.make_request("https://localhost/x.csv", "0" * 64)
        self.assertEqual(request["schema_version"], "example-crawler-request.v4")
        self.assertEqual(docs.failure_bundle(request, "CRAWLER_CANCELLED")["schema_version"],
                         "example-crawler-failure.v2")
        self.assertEqual(docs.MAX_BOOTSTRAP_RESPONSE_BYTES, 131072 + 32768 + 16384)
        values = docs.deployment_values()
        self.assertEqual(values["RESULT_SCHEMA"], "example-crawler-result.v4")
        self.assertEqual(values["MAX_CRAWLER_REQUEST_BYTES"], 131072)
        self.deployment.reset()
        self.assertEqual(docs.make_request("https://localhost/x.csv", "0" * 64)["schema_version"],
                         "mostlyright-crawler-request.v3")
        self.assertEqual(docs.MAX_BOOTSTRAP_RESPONSE_BYTES, 114688)

    def test_a_scripted_child_gets_the_values_in_force(self):
        self.deployment.set(["RESULT_SCHEMA=example-crawler-result.v4"])
        values = docs.deployment_values()
        self.deployment.reset()
        docs.deploy_values(values)
        try:
            self.assertEqual(docs.RESULT_SCHEMA, "example-crawler-result.v4")
        finally:
            self.deployment.reset()

    def test_bad_values_are_refused_with_the_reason(self):
        for assignment, words in [
            ("REQUEST_SCHEMA=Example.Request", "lowercase"),
            ("RESULT_SCHEMA=", "lowercase"),
            ("FAILURE_SCHEMA=a b", "lowercase"),
            ("MAX_CRAWLER_REQUEST_BYTES=64KiB", "digits"),
            ("MAX_CRAWLER_REQUEST_BYTES=1024", "must be"),
        ]:
            with self.subTest(assignment=assignment):
                with self.assertRaises(ValueError) as raised:
                    self.deployment.set([assignment])
                self.assertIn(words, str(raised.exception))
        self.assertEqual(self.deployment.overrides(), [])


@unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves node runs to make test")
class CrawlerDeployedNodeTest(unittest.TestCase):
    """A node with other schema strings and request bound passes with --deploy and fails without."""

    def test_the_harness_judges_a_node_with_its_own_values(self):
        judge_with_and_without(self, "crawler", NODE, OTHER_VALUES, SENSITIVE_CHECKS)


if __name__ == "__main__":
    unittest.main()
