"""The step node reads what the upstream read (contract/step.md, "Where we differ from the upstream").

- The reference node accepts every valid example of the envelope and the manifest and
  refuses every invalid one, so the schemas and the node agree on what is accepted.
- The plane's variants (the agent's and the job's dialects, the store's answers to an
  upload) change the text of what is served, never what the upstream would read from it.
"""

import json
import os
import shutil
import tempfile
import unittest

from conformance import dialect
from conformance.planes.step.agent import ENVELOPE_DIALECTS
from conformance.planes.step.job import MANIFEST_DIALECTS, Job
from conformance.store import ObjectStore
from conformance.tests import reference_node
from conformance.tests.contract_text import ContractText, load_json

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODE_FILE = os.path.join(ROOT, "nodes", "hello_node.py")

node = reference_node.load_node("hello_node", "peer")

DOC = ContractText("step")


def _examples(kind, schema):
    for name in DOC.examples(kind):
        if name.split("-", 1)[0] == schema:
            yield name, load_json(os.path.join(DOC.example_dir, kind, name))


def _read_envelope(envelope):
    """What the node does with an envelope before and while it reads its inputs; raises a StepFailure."""
    node.validate_envelope(envelope)
    for url in [envelope.get("manifest_get")] + [e.get("get_url") for e in envelope.get("inputs") or []
                                                 if isinstance(e, dict)]:
        if url:
            node.split_url(url)  # ValueError for a non-string or a scheme other than http(s) (D45)
    if not (envelope.get("manifest_get") or envelope.get("manifest_path")):
        raise node.Permanent("no manifest")
    for index, spec in enumerate(envelope.get("inputs") or []):
        if not isinstance(spec, dict):
            raise node.Permanent("entry %d" % index)
        node.input_pins(spec, "input %d" % index)
        if not (spec.get("get_url") or spec.get("local_path")):
            raise node.Permanent("no source")
        name = node.input_name(spec, index)
        node.check_relpath("outputs/" + name)  # the reference node's copy (STEP-WORK-2)


class NodeReadsTheExamplesTest(unittest.TestCase):
    """The schemas allow what the node accepts and refuse what it refuses."""

    def test_valid_envelopes_are_read(self):
        for name, envelope in _examples("valid", "envelope"):
            with self.subTest(example=name):
                try:
                    _read_envelope(envelope)
                except (node.StepFailure, ValueError) as exc:
                    self.fail("the node refuses valid/%s: %s" % (name, exc))

    def test_invalid_envelopes_are_refused(self):
        for name, envelope in _examples("invalid", "envelope"):
            with self.subTest(example=name):
                with self.assertRaises((node.StepFailure, ValueError)):
                    _read_envelope(envelope)

    def test_manifests(self):
        for kind in ("valid", "invalid"):
            for name, manifest in _examples(kind, "manifest"):
                with self.subTest(example=kind + "/" + name):
                    data = json.dumps(manifest).encode()
                    if kind == "valid":
                        node.parse_manifest(data)
                    else:
                        with self.assertRaises(node.StepFailure):
                            node.parse_manifest(data)

    def test_identity_floats_fall_back_to_the_environment(self):
        config = node.Config("/x", "named by X", None, {"execution_id": 41, "attempt": 2, "generation": 3}, "k")
        identity, why = node.resolve_identity({"execution_id": 41.0, "attempt": 2.0, "generation": 3.0,
                                               "idempotency_key": 412}, config)
        self.assertEqual(identity, {"execution_id": 41, "attempt": 2, "generation": 3, "idempotency_key": "k"})
        self.assertTrue(all(type(identity[k]) is int for k in ("execution_id", "attempt", "generation")))

    def test_size_pins(self):
        pin = node.input_pins({"sha256": "a" * 64, "size": 6.0}, "x")
        self.assertEqual((pin.size, type(pin.size)), (6, int))
        for bad in (6.5, "6", True, -1.0, -1):
            with self.subTest(size=bad):
                with self.assertRaises(node.Permanent):
                    node.input_pins({"sha256": "a" * 64, "size": bad}, "x")

    def test_fields_as_the_upstream_read_them(self):
        self.assertEqual(node.multipart_parts({"fields": [["a", 1], ["key", "x"]]}, "p/k"), [("a", 1), ("key", "p/k")])
        for false in (None, {}, [], "", 0, False):
            self.assertEqual(node.multipart_parts({"fields": false}, "p/k"), [("key", "p/k")])


class NoDeploymentConstantsTest(unittest.TestCase):
    """The upstream imports nothing from its platform, so no value of the step contract is a
    guess a deployment could set otherwise: no deployment constant, and the audit says so."""

    def test_the_step_contract_has_none_and_says_why(self):
        from conformance import checks
        self.assertIsNone(checks.deployment("step"))
        with open(DOC.path, encoding="utf-8") as handle:
            text = " ".join(handle.read().split())
        self.assertIn("the step contract has no deployment constants", text)
        with open(NODE_FILE, encoding="utf-8") as handle:
            node_text = handle.read()
        self.assertNotIn("Deployment constants", node_text.split("# ---- Below this line")[0])


class PlaneVariantsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="test-step-peer-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def test_dialect_names_are_known(self):
        self.assertIn("members", ENVELOPE_DIALECTS)
        self.assertIn("instant:offset", ENVELOPE_DIALECTS)
        self.assertEqual(MANIFEST_DIALECTS, ("members", "floats"))

    def test_manifest_dialects(self):
        store = ObjectStore(os.path.join(self.dir, "store"))
        self.addCleanup(store.close)
        job = Job(store, self.dir, manifest_dialect=("members", "floats"))
        self.assertEqual(job.manifest["execution_id"], 41.0)
        self.assertIsInstance(job.manifest["execution_id"], float)
        self.assertIn(dialect.UNKNOWN_MEMBER, job.manifest)
        self.assertEqual(job.manifest["params"], {"greeting": "hello"})  # params are the job's own
        with self.assertRaises(ValueError):
            Job(store, self.dir, manifest_dialect=("nope",))

    def test_success_action_status_answers(self):
        store = ObjectStore(os.path.join(self.dir, "store"))
        self.addCleanup(store.close)
        token = store.new_token()
        payload = node.bytes_payload(b"hello\n")
        for status in ("200", "201", None):
            post = store.presign_post("out/", token, success_action_status=status)
            with self.subTest(status=status):
                self.assertEqual(post["fields"].get("success_action_status"), status)
                node.post_object(post, "out/x-%s" % status, payload, "uploading", bytearray(node.CHUNK_BYTES))
                ex = [e for e in store.transcript if e.method == "POST"][-1]
                self.assertEqual(ex.status, int(status or 204))
                self.assertEqual(store.read_hash("out/x-%s" % status), (payload.sha256, payload.size))


if __name__ == "__main__":
    unittest.main()
