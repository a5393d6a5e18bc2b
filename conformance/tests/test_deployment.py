"""Deployment constants (conformance/deployment.py, contract/crawler.md D21).

The crawler's upstream imports four values without defining them; a node
deployed on a platform whose values differ changes them in its section 2, and
the harness must judge it with the same values (--deploy NAME=VALUE).  The
last test does exactly that with a copy of the reference node.
"""

import os
import unittest

from conformance import checks as _checks
from conformance import cli
from conformance.planes import crawler_docs as docs
from conformance.tests.deployed_node import judge_with_and_without

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE = os.path.join(ROOT, "nodes", "crawler_job.py")

# A platform with other values than the contract's, each one a line of the
# reference node's section 2 replaced.
OTHER_VALUES = [
    ('MAX_CRAWLER_RESULT_BYTES = 8 * 1024 * 1024', 'MAX_CRAWLER_RESULT_BYTES = 4 * 1024 * 1024',
     "MAX_CRAWLER_RESULT_BYTES=4194304"),
    ('RESULT_MEDIA_TYPE = "application/vnd.mostlyright.crawler-result+json"',
     'RESULT_MEDIA_TYPE = "application/vnd.example.result+json"',
     "RESULT_MEDIA_TYPE=application/vnd.example.result+json"),
    ('CHILD_ATTESTATION_ENV = "MOSTLYRIGHT_CRAWLER_EGRESS_POLICY_ATTESTATION"',
     'CHILD_ATTESTATION_ENV = "EXAMPLE_EGRESS_ATTESTATION"',
     "CHILD_ATTESTATION_ENV=EXAMPLE_EGRESS_ATTESTATION"),
    ('"CRAWLER_NORMALIZATION_FAILED", "CRAWLER_SOURCE_ENCODING_UNSUPPORTED", "CRAWLER_LIMIT_EXCEEDED"))',
     '"CRAWLER_NORMALIZATION_FAILED", "CRAWLER_SOURCE_ENCODING_UNSUPPORTED", "CRAWLER_LIMIT_EXCEEDED",\n'
     '    "CRAWLER_SOURCE_TOO_LARGE"))',
     "CHILD_CODES=CRAWLER_LIMIT_EXCEEDED,CRAWLER_NORMALIZATION_FAILED,CRAWLER_SOURCE_ENCODING_UNSUPPORTED,"
     "CRAWLER_SOURCE_TOO_LARGE"),
]
# Checks each value changes the verdict of: the capability's media type and
# bound (every run), the child's variable, the codes a child may name.
SENSITIVE_CHECKS = ["cap.accepted", "child.env", "child.refused-code"]


class DeploymentSettingsTest(unittest.TestCase):
    def setUp(self):
        self.deployment = _checks.deployment("crawler")
        self.addCleanup(self.deployment.reset)

    def test_defaults_are_the_contracts(self):
        self.assertEqual(self.deployment.overrides(), [])
        self.assertEqual(docs.MAX_CRAWLER_RESULT_BYTES, 8 * 1024 * 1024)
        self.assertEqual(docs.RESULT_MEDIA_TYPE, "application/vnd.mostlyright.crawler-result+json")

    def test_set_rebinds_the_fakes_values_and_reset_restores_them(self):
        self.deployment.set([item[2] for item in OTHER_VALUES])
        self.assertEqual(docs.MAX_CRAWLER_RESULT_BYTES, 4 * 1024 * 1024)
        self.assertEqual(docs.RESULT_MEDIA_TYPE, "application/vnd.example.result+json")
        self.assertIn("EXAMPLE_EGRESS_ATTESTATION", docs.CHILD_ENV_NAMES)
        self.assertIn("CRAWLER_SOURCE_TOO_LARGE", docs.CHILD_FAILURE_CODES)
        headers = dict(docs.required_headers("3f2b8c1e-7d4a-4e6b-9a15-c0d8e2f47b93",
                                             docs.make_request("https://localhost/x.csv", "0" * 64)))
        self.assertEqual(headers["Content-Type"], "application/vnd.example.result+json")
        self.assertEqual(headers["x-goog-content-length-range"], "1,4194304")
        self.assertEqual(sorted(self.deployment.overrides()), sorted(item[2] for item in OTHER_VALUES))
        self.deployment.reset()
        self.assertEqual(docs.MAX_CRAWLER_RESULT_BYTES, 8 * 1024 * 1024)
        self.assertNotIn("EXAMPLE_EGRESS_ATTESTATION", docs.CHILD_ENV_NAMES)

    def test_bad_values_are_refused_with_the_reason(self):
        for assignment, words in [
            ("MAX_CRAWLER_RESULT_BYTES=8MiB", "digits"),
            ("MAX_CRAWLER_RESULT_BYTES=1024", "must be"),
            ("RESULT_MEDIA_TYPE=application/json; charset=utf-8", "without parameters"),
            ("CHILD_ATTESTATION_ENV=lower_case", "upper-case"),
            ("CHILD_ATTESTATION_ENV=OMP_NUM_THREADS", "thread pins"),
            ("CHILD_CODES=CRAWLER_NOPE", "not in it"),
            ("CHILD_CODES=CRAWLER_NORMALIZATION_FAILED", "cannot drop"),
            ("NOT_A_CONSTANT=1", "unknown deployment constant"),
            ("RESULT_MEDIA_TYPE", "NAME=VALUE"),
        ]:
            with self.subTest(assignment=assignment):
                with self.assertRaises(ValueError) as raised:
                    self.deployment.set([assignment])
                self.assertIn(words, str(raised.exception))
        self.assertEqual(self.deployment.overrides(), [])
        with self.assertRaises(ValueError):
            self.deployment.set(["RESULT_MEDIA_TYPE=a/b", "RESULT_MEDIA_TYPE=c/d"])

    def test_the_command_line_refuses_deploy_where_a_contract_has_none(self):
        with self.assertRaises(cli.UsageError) as raised:
            cli.parse(["step", "--list", "--deploy", "X=1"])
        self.assertIn("no deployment constants", str(raised.exception))

    def test_a_rerun_command_carries_the_values(self):
        self.deployment.set(["RESULT_MEDIA_TYPE=application/vnd.example.result+json"])
        node = _checks.NodeSpec.from_path(NODE)
        command = _checks.repro_command("crawler", node, "cap.accepted", 0)
        self.assertIn("--deploy RESULT_MEDIA_TYPE=application/vnd.example.result+json", command)


@unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves node runs to make test")
class DeployedNodeTest(unittest.TestCase):
    """A node with other deployment values passes with --deploy and fails without."""

    def test_the_harness_judges_a_node_with_its_own_values(self):
        judge_with_and_without(self, "crawler", NODE, OTHER_VALUES, SENSITIVE_CHECKS)


if __name__ == "__main__":
    unittest.main()
