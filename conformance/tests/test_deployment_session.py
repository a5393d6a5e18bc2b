"""The session contract's deployment constants (contract/session.md D38, conformance/planes/session/deploy.py).

The upstream session worker imports its callback paths, the capability's bounds, the probe
vocabulary's version and bounds, the event stream's success code and cap, and the crawler result's
schema strings from modules that are not in its source.  A node deployed on a platform whose values
differ changes them in its section 2, and the harness judges it with the same values
(--deploy NAME=VALUE).  The last test does exactly that with a copy of the reference node.
"""

import os
import unittest

from conformance import checks as _checks
from conformance.planes.session import deploy
from conformance.planes.session.control import TEMPLATES, route_of
from conformance.tests.deployed_node import judge_with_and_without

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE = os.path.join(ROOT, "nodes", "session_worker.py")

# A platform with other values than the contract's, each one line of the reference node's section 2
# replaced, and the assignment that tells the harness.
OTHER_VALUES = [
    ('CLAIM_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}/probes:claim"',
     'CLAIM_PATH_TEMPLATE = "/internal/v3/producer/attempts/{attempt_id}/probe-claims"',
     "CLAIM_PATH_TEMPLATE=/internal/v3/producer/attempts/{attempt_id}/probe-claims"),
    ('PROBE_SCHEMA_VERSION = "1.0.0"', 'PROBE_SCHEMA_VERSION = "2.0.0"', "PROBE_SCHEMA_VERSION=2.0.0"),
    ('PROBE_OK_CODE = "OK"', 'PROBE_OK_CODE = "PROBE_SUCCEEDED"', "PROBE_OK_CODE=PROBE_SUCCEEDED"),
]
# Checks each value changes the verdict of: the claim's path (every session claims), a result's
# schema_version, a settled event's success code.
SENSITIVE_CHECKS = ["claim.request", "probe.result-bound", "progress.settled-facts"]


class DeploymentSettingsTest(unittest.TestCase):
    def setUp(self):
        self.deployment = _checks.deployment("session")
        self.addCleanup(self.deployment.reset)

    def test_defaults_are_the_contracts_and_the_nodes(self):
        self.assertEqual(self.deployment.overrides(), [])
        with open(NODE, encoding="utf-8") as handle:
            text = handle.read()
        section_2 = text[text.index("# 2 Configuration [EDIT]"):text.index("# 3 Your work [EDIT]")]
        for name, value in deploy.values().items():
            with self.subTest(name=name):
                self.assertIn("\n%s = " % name, section_2, "section 2 of the node has no %s" % name)
                line = section_2.split("\n%s = " % name, 1)[1].split("\n", 1)[0].split("  #", 1)[0]
                self.assertEqual(eval(line, {}), value, "the node's %s is not the contract's" % name)

    def test_set_rebinds_the_fakes_values_and_reset_restores_them(self):
        self.deployment.set([item[2] for item in OTHER_VALUES])
        self.assertEqual(deploy.PROBE_OK_CODE, "PROBE_SUCCEEDED")
        self.assertEqual(TEMPLATES["claim"][1], "/internal/v3/producer/attempts/{attempt_id}/probe-claims")
        verb, ids, method_ok = route_of("POST", "/internal/v3/producer/attempts/a1/probe-claims", "")
        self.assertEqual((verb, ids, method_ok), ("claim", {"attempt_id": "a1"}, True))
        self.assertEqual(route_of("POST", "/internal/v3/producer/attempts/a1/probes:claim", "")[0], "other")
        self.assertEqual(sorted(self.deployment.overrides()), sorted(item[2] for item in OTHER_VALUES))
        self.deployment.reset()
        self.assertEqual(deploy.PROBE_OK_CODE, "OK")
        self.assertEqual(route_of("POST", "/internal/v3/producer/attempts/a1/probes:claim", "")[0], "claim")

    def test_schemas_are_judged_with_the_values_in_force(self):
        self.deployment.set(["PROBE_SCHEMA_VERSION=2.0.0", "MAX_PROFILE_COLUMNS=8"])
        schema = deploy.deployed_schema("probe-result", {"properties": {"schema_version": {"const": "1.0.0"},
                                                                        "columns": {"maxItems": 64}}})
        self.assertEqual(schema["properties"]["schema_version"]["const"], "2.0.0")
        self.assertEqual(schema["properties"]["columns"]["maxItems"], 8)

    def test_bad_values_are_refused_with_the_reason(self):
        for assignment, words in [
            ("CLAIM_PATH_TEMPLATE=/elsewhere/{attempt_id}/claim", "under /internal/v3/producer/"),
            ("RESULT_PATH_TEMPLATE=/internal/v3/producer/attempts/{attempt_id}/result", "{probe_id}"),
            ("START_PATH_TEMPLATE=/internal/v3/producer/start", "{attempt_id}"),
            ("PROBE_RESULT_MAX_BYTES=64KiB", "digits"),
            ("PROBE_RESULT_MAX_BYTES=100", "must be"),
            ("PROBE_OK_CODE=ok", "a code"),
            ("MIN_CAPABILITY_BYTES=300", "at most MAX_CAPABILITY_BYTES"),
            ("CRAWLER_RESULT_SCHEMAS=Upper.Case", "schema strings"),
            ("NOT_A_CONSTANT=1", "unknown deployment constant"),
        ]:
            with self.subTest(assignment=assignment):
                with self.assertRaises(ValueError) as raised:
                    self.deployment.set([assignment])
                self.assertIn(words, str(raised.exception))
                self.deployment.reset()
        self.assertEqual(self.deployment.overrides(), [])

    def test_a_rerun_command_carries_the_values(self):
        self.deployment.set(["PROBE_OK_CODE=PROBE_SUCCEEDED"])
        node = _checks.NodeSpec.from_path(NODE)
        command = _checks.repro_command("session", node, "progress.settled-facts", 0)
        self.assertIn("--deploy PROBE_OK_CODE=PROBE_SUCCEEDED", command)


@unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves node runs to make test")
class DeployedNodeTest(unittest.TestCase):
    """A node with other deployment values passes with --deploy and fails without."""

    def test_the_harness_judges_a_node_with_its_own_values(self):
        judge_with_and_without(self, "session", NODE, OTHER_VALUES, SENSITIVE_CHECKS)


if __name__ == "__main__":
    unittest.main()
