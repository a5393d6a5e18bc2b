"""The scan contract's deployment constants (contract/scan.md D30; conformance/planes/scan/deploy.py).

The upstream scan worker imports four values from modules of its platform that are not in the
seed; a node deployed where they differ changes them in its section 2, and the harness must judge
it with the same values (--deploy NAME=VALUE).  The last test does that with a copy of the
reference node.
"""

import json
import os
import unittest

from conformance import checks as _checks
from conformance.planes.scan import bundles, deploy
from conformance.planes.scan.calls import build_values, claim_problems
from conformance.tests.deployed_node import judge_with_and_without

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE = os.path.join(ROOT, "nodes", "scan_worker.py")

OTHER_BUILD = {"worker": {"capabilities": "$capabilities", "code": "$code_sha256"}, "protocol": 3,
               "name": "$node", "release": "$version"}
# A platform with other values than the contract's, each one line of the reference node's section 2
# replaced, and the --deploy assignment that tells the harness.
OTHER_VALUES = [
    ('CLAIM_BUILD = {"capabilities": "$capabilities", "code_sha256": "$code_sha256", "node": "$node", "protocol": 2,\n'
     '               "version": "$version"}',
     "CLAIM_BUILD = %s" % json.dumps(OTHER_BUILD),
     "CLAIM_BUILD=%s" % json.dumps(OTHER_BUILD)),
    ('BUNDLE_FORMAT = "scan-bundle/1"', 'BUNDLE_FORMAT = "acme-bundle/2"', "BUNDLE_FORMAT=acme-bundle/2"),
    ('MAX_BUNDLE_LINE_BYTES = 64 * 1024', 'MAX_BUNDLE_LINE_BYTES = 32 * 1024', "MAX_BUNDLE_LINE_BYTES=32768"),
    ('MAX_PENDING_BYTES = 1024 * 1024\n', 'MAX_PENDING_BYTES = 2 * 1024 * 1024\n', "MAX_PENDING_BYTES=2097152"),
]
# The checks each value changes the verdict of: the claim's build, the bundle's header, the answer
# bound (a status over 1 MiB but under 2 MiB), the scan's piece (a quarter of a line; --reference).
SENSITIVE_CHECKS = ["claim.request", "bundle.envelope", "http.bounded", "work.long-line"]


class _Call(object):
    """Just enough of a ScanCall for claim_problems."""

    def __init__(self, doc):
        self.doc = doc
        self.canonical = True
        self.headers = [("Host", "x"), ("Authorization", "Bearer x"), ("Content-Type", "application/json"),
                        ("Content-Length", "1"), ("Accept-Encoding", "identity")]
        self.path = "/api/v1/worker/claim"

    @property
    def header_names(self):
        return [k for k, _v in self.headers]

    def header(self, name):
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


class ScanDeploymentTest(unittest.TestCase):
    def setUp(self):
        self.deployment = _checks.deployment("scan")
        self.addCleanup(self.deployment.reset)

    def test_defaults_are_the_contracts_and_the_nodes(self):
        self.assertEqual(self.deployment.overrides(), [])
        with open(NODE, encoding="utf-8") as handle:
            text = handle.read()
        for old, _new, _assignment in OTHER_VALUES:
            self.assertEqual(text.count(old), 1, "section 2 of the reference node no longer has %r" % old)
        self.assertEqual(deploy.BUNDLE_FORMAT, "scan-bundle/1")
        self.assertEqual(deploy.MAX_PENDING_BYTES, 1 << 20)

    def test_set_rebinds_what_the_fakes_read_and_reset_restores_it(self):
        self.deployment.set([item[2] for item in OTHER_VALUES])
        self.assertEqual(deploy.CLAIM_BUILD, OTHER_BUILD)
        self.assertEqual(deploy.BUNDLE_FORMAT, "acme-bundle/2")
        self.assertEqual(deploy.MAX_BUNDLE_LINE_BYTES, 32768)
        self.assertEqual(deploy.MAX_PENDING_BYTES, 2 << 20)
        self.assertEqual(sorted(item.split("=", 1)[0] for item in self.deployment.overrides()),
                         sorted(item[2].split("=", 1)[0] for item in OTHER_VALUES))
        self.deployment.reset()
        self.assertEqual(deploy.BUNDLE_FORMAT, bundles.FORMAT)

    def test_the_build_is_judged_against_the_template_in_force(self):
        ours = {"capabilities": [["fixture", "local", "files"]], "code_sha256": "a" * 64, "node": "n",
                "protocol": 2, "version": "1"}
        theirs = {"worker": {"capabilities": [["fixture", "local", "files"]], "code": "a" * 64}, "protocol": 3,
                  "name": "n", "release": "1"}
        self.assertEqual(claim_problems(_Call({"build": ours, "request_id": "0" * 32})), [])
        self.assertTrue(claim_problems(_Call({"build": theirs, "request_id": "0" * 32})))
        self.deployment.set([OTHER_VALUES[0][2]])
        self.assertEqual(claim_problems(_Call({"build": theirs, "request_id": "0" * 32})), [])
        self.assertTrue(claim_problems(_Call({"build": ours, "request_id": "0" * 32})))
        self.assertEqual(build_values(theirs, "$code_sha256"), ["a" * 64])

    def test_bad_values_are_refused_with_the_reason(self):
        for assignment, words in [
            ("CLAIM_BUILD=[1]", "a JSON object"),
            ("CLAIM_BUILD={", "JSON text"),
            ('CLAIM_BUILD={"protocol": 2}', "exactly once"),
            ("BUNDLE_FORMAT=two words", "no space"),
            ("MAX_BUNDLE_LINE_BYTES=64KiB", "digits"),
            ("MAX_BUNDLE_LINE_BYTES=1024", "must be"),
            ("MAX_PENDING_BYTES=1024", "must be"),
            ("NOT_A_CONSTANT=1", "unknown deployment constant"),
        ]:
            with self.subTest(assignment=assignment):
                with self.assertRaises(ValueError) as raised:
                    self.deployment.set([assignment])
                self.assertIn(words, str(raised.exception))
        self.assertEqual(self.deployment.overrides(), [])


@unittest.skipIf(os.environ.get("CONFORMANCE_CHECK_FAST"), "make check-fast leaves node runs to make test")
class DeployedScanNodeTest(unittest.TestCase):
    """A scan node with other deployment values passes with --deploy and fails without."""

    def test_the_harness_judges_a_node_with_its_own_values(self):
        judge_with_and_without(self, "scan", NODE, OTHER_VALUES, SENSITIVE_CHECKS, reference=True)


if __name__ == "__main__":
    unittest.main()
