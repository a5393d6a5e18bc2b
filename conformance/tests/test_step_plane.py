"""The step plane without a node: its fakes, driven by hand.

The agent's envelope must name what the job seeded, presigned with the
current token, and a rotation must change the file and the token the store
accepts; the collector must read back what staging holds and refuse a marker
that disagrees with it; the plane's invariants must catch a leaked secret, an
unknown exit status and a file left under TMPDIR. Each keyword reaches the
fake that declares it, and an unknown one is a TypeError.
"""

import hashlib
import json
import os
import shutil
import time
import unittest
import urllib.error
import urllib.request

from conformance.checks import Check, Context, NodeSpec
from conformance.planes.step import (IDENTITY, KEY_PREFIX, MARKER_NAME, OMIT, RESULT_NAME, Collector,
                                     CredentialsAgent, Input, Job, StepPlane)
from conformance.runner import RunResult
from conformance.timeouts import SHORT_TIMEOUT_S

CHECK = Check("plane.selftest", "step", "PLANE", ["STEP-MARKER-5"], "MUST", "plane self-test", "", "", None)


def fake_run(exit_code=0, stdout="", stderr="", argv=None):
    """A RunResult as the runner would make it for a node that did this."""
    return RunResult(exit_code=exit_code, stdout=stdout, stderr=stderr, host_pid=2 ** 22 + 11,
                     cmdline_snapshot=argv or ["python3", "node.py"], t_exit=time.monotonic())


def read_url(url):
    """(status, body) of a GET, whatever the status."""
    try:
        with urllib.request.urlopen(url, timeout=SHORT_TIMEOUT_S) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def marker_for(objects, **fields):
    """A marker listing objects ({relpath: bytes}) with this run's identity."""
    doc = dict(IDENTITY, schema_version=1, status="succeeded", exit_code=0, error=None,
               produced_ports={}, facts={}, started_at="2024-01-01T00:00:00+00:00",
               objects=[{"relpath": r, "sha256": hashlib.sha256(b).hexdigest(), "size": len(b)}
                        for r, b in sorted(objects.items())])
    doc.update(fields)
    return json.dumps(doc).encode()


class StepPlaneTest(unittest.TestCase):

    def setUp(self):
        self.ctx = Context(CHECK, NodeSpec(["true"]))
        self.planes = []

    def tearDown(self):
        for plane in self.planes:
            plane.close()
        shutil.rmtree(self.ctx.tmp, ignore_errors=True)

    def plane(self, **kwargs):
        plane = StepPlane(self.ctx, **kwargs)
        self.planes.append(plane)
        return plane

    def read_envelope(self, plane):
        with open(plane.agent.path, "rb") as handle:
            return json.loads(handle.read().decode("utf-8"))

    # ---------------------------------------------------------------- options
    def test_each_keyword_reaches_its_fake(self):
        plane = self.plane(inputs=[Input("a.csv", b"1\n")], expires_in_s=3, staging="local_path",
                           manifest_source="local", creds_env="legacy", max_bytes=1000)
        self.assertEqual([item.relpath for item in plane.job.inputs], ["a.csv"])
        self.assertEqual(plane.agent.expires_in_s, 3)
        self.assertEqual((plane.collector.staging, plane.collector.max_bytes), ("local_path", 1000))
        env = plane.env()
        self.assertEqual(env["LSPO_CREDENTIALS"], plane.agent.path)
        self.assertNotIn("LSPO_CREDENTIALS_FILE", env)
        self.assertEqual(env["LSPO_EXECUTION_ID"], "41")

    def test_an_unknown_keyword_is_refused(self):
        with self.assertRaises(TypeError):
            StepPlane(self.ctx, expires_in=3)

    def test_the_options_each_fake_declares_are_distinct(self):
        names = list(Job.OPTIONS) + list(CredentialsAgent.OPTIONS) + list(Collector.OPTIONS)
        self.assertEqual(len(names), len(set(names)))

    # ---------------------------------------------------------------- the agent
    def test_the_envelope_names_what_the_job_seeded(self):
        items = [Input("a.csv", b"x,y\n1,2\n", port="left"), Input("b.csv", b"3\n", sha256=OMIT)]
        plane = self.plane(inputs=items)
        doc = self.read_envelope(plane)
        self.assertEqual((doc["schema_version"], doc["scheme"], doc["staging"]["mode"]), (1, "s3", "presigned_post"))
        self.assertEqual(doc["inputs"][0]["sha256"], hashlib.sha256(b"x,y\n1,2\n").hexdigest())
        self.assertEqual((doc["inputs"][0]["size"], doc["inputs"][0]["port"]), (8, "left"))
        self.assertNotIn("sha256", doc["inputs"][1])
        self.assertEqual(read_url(doc["inputs"][0]["get_url"]), (200, b"x,y\n1,2\n"))
        self.assertEqual(read_url(doc["manifest_get"])[0], 200)
        self.assertEqual(plane.job.gets(items[0])[0].notes.get("token_seq"), 1)
        self.assertEqual(len(plane.job.input_gets()), 1)
        self.assertEqual(plane.collector.post_field_names(), list(doc["staging"]["post"]["fields"]))

    def test_a_rotation_replaces_the_file_and_the_token(self):
        items = [Input("a.csv", b"1\n")]
        plane = self.plane(inputs=items)
        old = self.read_envelope(plane)["inputs"][0]["get_url"]
        inode = os.stat(plane.agent.path).st_ino
        plane.agent.rotate(expire_old=True)
        new = self.read_envelope(plane)["inputs"][0]["get_url"]
        self.assertNotEqual(os.stat(plane.agent.path).st_ino, inode)
        self.assertEqual(len(plane.agent.tokens), 2)
        self.assertEqual(read_url(new)[0], 200)
        self.assertEqual(read_url(old)[0], 400)
        self.assertEqual([ex.notes.get("token_seq") for ex in plane.job.gets(items[0])], [2, 1])

    def test_rewrite_same_and_remove(self):
        plane = self.plane(inputs=[Input("a.csv", b"1\n")])
        with open(plane.agent.path, "rb") as handle:
            before = handle.read()
        inode = os.stat(plane.agent.path).st_ino
        plane.agent.rewrite_same()
        with open(plane.agent.path, "rb") as handle:
            self.assertEqual(handle.read(), before)
        self.assertNotEqual(os.stat(plane.agent.path).st_ino, inode)
        plane.agent.remove()
        self.assertFalse(os.path.exists(plane.agent.path))

    # ---------------------------------------------------------------- the collector
    def test_a_consistent_marker_is_collected_clean(self):
        plane = self.plane(inputs=[Input("a.csv", b"1\n")])
        objects = {"out/a.csv": b"copy\n", RESULT_NAME: b"{}"}
        for relpath, data in objects.items():
            plane.store.put(KEY_PREFIX + relpath, data)
        plane.store.put(KEY_PREFIX + MARKER_NAME, marker_for(objects))
        plane.result = fake_run(0)
        plane.collector.collect()
        self.assertEqual(plane.marker["status"], "succeeded")
        self.assertEqual(plane.report, {})
        self.assertEqual(plane.collector.data_relpaths(), ["out/a.csv"])
        self.assertEqual(plane.invariants(), [])

    def test_the_collector_refuses_a_marker_that_disagrees(self):
        plane = self.plane(inputs=[Input("a.csv", b"1\n")])
        plane.store.put(KEY_PREFIX + "out/a.csv", b"copy\n")
        plane.store.put(KEY_PREFIX + "out/unlisted.csv", b"more\n")
        plane.store.put(KEY_PREFIX + MARKER_NAME, marker_for({"out/a.csv": b"other\n"}, attempt=7, exit_code=1))
        plane.result = fake_run(0)
        plane.collector.collect()
        names = [v.name for v in plane.invariants()]
        for wanted in ("STEP-MARKER-3", "STEP-MARKER-2: status", "stored bytes'", "every object begun",
                       "STEP-MANIFEST-4"):
            self.assertTrue(any(wanted in name for name in names), (wanted, names))

    def test_local_staging_is_read_from_its_directory(self):
        plane = self.plane(inputs=[Input("a.csv", b"1\n", source="local")], staging="local_path",
                           manifest_source="local")
        doc = self.read_envelope(plane)
        self.assertEqual((doc["scheme"], doc["staging"]["mode"]), ("local", "local_path"))
        self.assertTrue(os.path.isfile(doc["manifest_path"]) and os.path.isfile(doc["inputs"][0]["local_path"]))
        staging = doc["staging"]["path"]
        os.makedirs(os.path.join(staging, "out"))
        with open(os.path.join(staging, "out", "a.csv"), "wb") as handle:
            handle.write(b"copy\n")
        self.assertEqual(plane.collector.stored_relpaths(), ["out/a.csv"])
        self.assertEqual(plane.collector.hash_stored("out/a.csv"), (hashlib.sha256(b"copy\n").hexdigest(), 5))
        self.assertEqual(plane.collector.read_stored("out/a.csv"), b"copy\n")

    # ---------------------------------------------------------------- across fakes
    def test_the_plane_catches_a_leak_an_unknown_exit_and_a_left_file(self):
        plane = self.plane(inputs=[Input("a.csv", b"1\n")])
        with open(os.path.join(plane.scratch, "left.tmp"), "wb") as handle:
            handle.write(b"x")
        plane.result = fake_run(3, stderr="node: GET %s failed\n" % plane.agent.token)
        plane.collector.collect()
        names = [v.name for v in plane.invariants()]
        self.assertEqual([name.split(":")[0] for name in names], ["STEP-REDACT-1", "STEP-EXIT-1", "STEP-STREAM-3"])
        self.assertEqual(plane.describe_secret(plane.agent.token), "session token #1")


if __name__ == "__main__":
    unittest.main()
