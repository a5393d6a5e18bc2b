"""The session plane without the session node: a small client and toy processes drive it.

The client does what contract/session.md asks of a session worker at each fake (mint an identity
token at the metadata server, exchange the dispatch, acquire a source, download the bundle the
descriptor names) with urllib and http.client and the test CA; toy processes stand in for the
node where a run is needed (its environment, its scratch directory, its argv). Each test can fail:
the plane must hand out what the contract says and its invariants must fire on a planted fault.
"""

import base64
import hashlib
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import unittest
import unittest.mock
import urllib.parse
import urllib.request

from conformance.checks import Check, Context, NodeSpec
from conformance.planes import crawler_docs as docs
from conformance.planes.metadata import IDENTITY_PATH
from conformance.planes.session import BUCKET, OMIT, SessionPlane, descriptor_patch, watch
from conformance.planes.session.control import parse_strict, schema_problems
from conformance.planes.session.verdict import parse_summaries
from conformance.schema import validate
from conformance.runner import descendants
from conformance.servers import CA_FILE
from conformance.tests.test_session_control import Client
from conformance.timeouts import SHORT_TIMEOUT_S, Deadline

CHECK = Check("plane.selftest", "session", "PLANE", ["SESSION-EXIT-1"], "MUST", "plane self-test", "", "", None)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A stand-in for the node: sleeps a moment (the argv the plane adds is ignored).
SLEEPER = "import time; time.sleep(%s)"
# Another: leaves a file in TMPDIR and exits.
LITTERER = "import os; open(os.path.join(os.environ['TMPDIR'], 'left.txt'), 'w').write('x')"
# Another: a Service stand-in on PORT: takes wait_listening's connection, then answers one POST
# with the keys of the body it got.
SERVICE = """
import http.server, json, os
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        doc = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps({"keys": sorted(doc), "path": self.path}).encode()
        self.send_response(202)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("0.0.0.0", int(os.environ["PORT"])), H)
server.handle_request()
server.handle_request()
"""
# Another: starts a child in a session of its own (as the capability process is) and leaves it.
DESERTER = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'], "
            "start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); time.sleep(%s)")
# How long a toy sleeps: long enough for the plane's watch to sample it a few times.
TOY_SLEEP_S = 0.3

with open(os.path.join(ROOT, "contract", "schemas", "crawler", "result.schema.json"), encoding="utf-8") as _f:
    RESULT_SCHEMA = json.load(_f)


def tls_context():
    return ssl.create_default_context(cafile=CA_FILE)


class PlaneTest(unittest.TestCase):
    def setUp(self):
        self.contexts, self.planes = [], []

    def tearDown(self):
        for plane in self.planes:
            for run in plane.runs:
                if run.proc.running():
                    run.proc.wait(0)
            plane.close()

    def plane(self, toy=None, **options):
        """A plane on a fresh Context whose 'node' is the toy program (python -c toy)."""
        spec = NodeSpec.from_command([sys.executable, "-c", toy or SLEEPER % TOY_SLEEP_S])
        ctx = Context(CHECK, spec)
        self.addCleanup(__import__("shutil").rmtree, ctx.tmp, True)
        plane = SessionPlane(ctx, **options)
        self.planes.append(plane)
        return plane

    def mint(self, plane, audience):
        """An identity token from the metadata server, as SESSION-DISPATCH-2 asks for it."""
        query = urllib.parse.urlencode({"audience": audience, "format": "full"})
        request = urllib.request.Request("http://%s%s?%s" % (plane.metadata.host, IDENTITY_PATH, query),
                                         headers={"Metadata-Flavor": "Google"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=SHORT_TIMEOUT_S) as response:
            return response.read().decode("ascii")

    def leased(self, plane):
        """A client holding the lease, exchanged with a token minted for the origin."""
        client = Client(plane.control)
        status, _lease = client.exchange(token=self.mint(plane, plane.control.origin))
        self.assertEqual(status, 200)
        self.assertEqual(client.start()[0], 200)
        return client

    def names(self, plane):
        return [v.name.split(":")[0] for v in plane.invariants()]


class IdentityAndExchangeTest(PlaneTest):
    def test_the_control_plane_takes_only_tokens_the_metadata_server_minted_for_its_audience(self):
        plane = self.plane()
        client = Client(plane.control)
        other = self.mint(plane, "https://elsewhere.invalid")
        self.assertEqual(client.exchange(token=other)[0], 401)                       # another audience
        self.assertEqual(client.exchange(token=other[:-4] + "AAAA")[0], 401)          # never minted
        status, lease = client.exchange(token=self.mint(plane, plane.control.origin))
        self.assertEqual(status, 200)
        self.assertEqual(schema_problems("lease", lease), [])
        self.assertEqual([(m.audience, m.presented) for m in plane.metadata.tokens()],
                         [("https://elsewhere.invalid", [("session", None)]),
                          (plane.control.origin, [("session", None)])])


class BundleTest(PlaneTest):
    def download(self, descriptor):
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                             urllib.request.HTTPSHandler(context=tls_context()))
        with opener.open(descriptor["url"], timeout=SHORT_TIMEOUT_S) as response:
            return response.read()

    def test_the_descriptor_names_a_crawler_result_that_hashes_as_declared(self):
        plane = self.plane()
        source = plane.add_source(columns=["city", "temp"], rows=[["Oslo", 3], ["Lima", None], ["Qu\u00e9bec", -8]])
        self.assertEqual(plane.control.source_ids, [source.source_id])
        client = self.leased(plane)
        status, doc, _headers = client.acquire(source.source_id)
        self.assertEqual((status, doc["status"]), (201, "result_ready"))
        self.assertEqual(schema_problems("acquisition", doc), [])
        descriptor = doc["result_download"]
        url = urllib.parse.urlsplit(descriptor["url"])
        store = urllib.parse.urlsplit(plane.store.origin)
        self.assertEqual((url.scheme, url.netloc), ("https", store.netloc))
        self.assertTrue(url.path.startswith("/%s/%s" % (BUCKET, docs.RESULT_PREFIX)) and url.query, url)
        raw = self.download(descriptor)
        self.assertEqual((len(raw), hashlib.sha256(raw).hexdigest()),
                         (descriptor["bundle_size_bytes"], descriptor["bundle_sha256"]))
        bundle = docs.parse_canonical(raw)                                            # canonical JSON
        self.assertEqual(validate(bundle, RESULT_SCHEMA), [])
        content = base64.b64decode(bundle["normalized_content"])
        receipt = bundle["acquisition_receipt"]
        self.assertEqual(content, b'["city","temp"]\n["Oslo",3]\n["Lima",null]\n["Qu\xc3\xa9bec",-8]\n')
        self.assertEqual(docs.read_content(content, "jsonl").row_count, receipt["row_count"])
        self.assertEqual((receipt["normalized_content_sha256"], receipt["normalized_size_bytes"]),
                         (source.content_sha256, len(content)))
        self.assertEqual((bundle["source_id"], receipt["source_id"], bundle["adapter_id"]),
                         (source.source_id, source.source_id, "public.https"))
        self.assertEqual((bundle["request_digest"], receipt["egress_policy_attestation"]),
                         (doc["request_digest"], doc["egress_policy_attestation"]))
        self.assertEqual(descriptor["request_digest"], doc["request_digest"])

    def test_variants_bind_the_bundle_to_something_else(self):
        plane = self.plane()
        other = plane.add_source(rows=[[1]], bundle_source_id="0f6e3a55-9a1c-4b8e-8f3d-2a7c5e9b1d40",
                                 patch=descriptor_patch(bundle_size_bytes=33554433))
        wrong = plane.add_source(rows=[[1]], declared_bytes=b"x" * 10)
        client = self.leased(plane)
        doc = client.acquire(other.source_id)[1]
        self.assertEqual(doc["result_download"]["bundle_size_bytes"], 33554433)
        self.assertNotEqual(docs.parse_canonical(other.bundle.raw)["source_id"], other.source_id)
        doc = client.acquire(wrong.source_id)[1]
        self.assertEqual((doc["result_download"]["bundle_size_bytes"], doc["result_download"]["bundle_sha256"]),
                         (10, hashlib.sha256(b"x" * 10).hexdigest()))


class EnvironmentTest(PlaneTest):
    def test_a_job_mode_run_gets_the_six_cells_and_the_platform_seams(self):
        plane = self.plane()
        proc = plane.start()
        argv, env = proc.argv[3:], proc.env
        control = plane.control
        self.assertEqual(argv, ["--session-dispatch-id", control.dispatch_id, "--session-dispatch-exchange-url",
                                "%s/internal/v3/session-worker/dispatches/%s:exchange" % (control.origin,
                                                                                         control.dispatch_id),
                                "--session-dispatch-audience", control.origin])
        self.assertEqual(env["STUDIO_API_ORIGIN"], control.origin)
        self.assertTrue(env["STUDIO_API_ORIGIN"].startswith("https://127.0.0.1:"))
        self.assertEqual(env["GCE_METADATA_HOST"], "127.0.0.1:%d" % plane.metadata.port)
        self.assertEqual((env["STORAGE_EMULATOR_HOST"], env["SSL_CERT_FILE"]), (plane.store.origin, CA_FILE))
        self.assertEqual(env["MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET"], BUCKET)
        self.assertEqual(os.listdir(env["TMPDIR"]), [])
        for name in ("WARM_POOL_SIZE", "PROBE_TIMEOUT_SECONDS", "ACQUISITION_TIMEOUT_SECONDS",
                     "SHUTDOWN_GRACE_SECONDS"):
            self.assertRegex(env["MR_SESSION_WORKER_" + name], r"^[0-9]+(\.[0-9]+)?\Z")
        self.assertEqual(set(env[n] for n in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY")),
                         {"http://127.0.0.1:%d" % plane.tripwire.port})
        self.assertNotIn("PORT", env)
        joined = "\0".join(argv + ["%s=%s" % kv for kv in env.items()])
        self.assertFalse([s for s in plane.secrets() if s in joined])
        second = plane.start(mode="service")
        self.assertEqual((second.argv[3:], second.env["PORT"]), ([], str(plane.port)))
        self.assertNotEqual(second.env["TMPDIR"], env["TMPDIR"])                     # a fresh TMPDIR per run
        plane.wait()
        plane.runs[0].proc.wait(SHORT_TIMEOUT_S)


class ServiceTest(PlaneTest):
    def test_a_session_start_names_the_control_plane_and_carries_its_nonce(self):
        plane = self.plane(toy=SERVICE)
        plane.start(mode="service")
        plane.wait_listening()
        body = plane.start_body()
        self.assertEqual(body["lease_url"], "%s/internal/v3/session-worker/sessions/%s:lease"
                         % (plane.control.origin, plane.control.binding["session_id"]))
        self.assertEqual(body["lease_nonce"], plane.control.lease_nonce)
        answer = plane.start_session(lease_url=OMIT)
        self.assertEqual((answer.status, answer.doc), (202, {"keys": ["lease_nonce", "schema_version",
                                                                      "session_id", "workspace_id"],
                                                             "path": "/sessions:start"}))
        self.assertEqual(plane.wait().exit_code, 0)
        self.assertEqual(self.names(plane), [])


class TrustTest(PlaneTest):
    def connect(self, plane, fake):
        split = urllib.parse.urlsplit(fake.origin)
        context = ssl.create_default_context(cafile=plane.env()["SSL_CERT_FILE"])
        with socket.create_connection((split.hostname, split.port), SHORT_TIMEOUT_S) as sock:
            with context.wrap_socket(sock, server_hostname=split.hostname):
                return True

    def test_a_misnamed_server_is_refused_for_its_name_only(self):
        plane = self.plane(misnamed=("control",), untrusted=("store",))
        with self.assertRaises(ssl.SSLCertVerificationError) as caught:
            self.connect(plane, plane.control)
        self.assertIn("match", str(caught.exception))                                # the name, not the chain
        with self.assertRaises(ssl.SSLCertVerificationError):
            self.connect(plane, plane.store)
        plain = self.plane()
        self.assertTrue(self.connect(plain, plain.control))
        with self.assertRaises(TypeError):
            self.plane(misnamed=("metadata",))


class InvariantTest(PlaneTest):
    def test_a_secret_planted_in_a_scratch_file_is_found_though_the_file_is_gone(self):
        plane = self.plane()
        plane.start()
        path = os.path.join(plane.runs[0].scratch, "spool.bin")
        with open(path, "w") as handle:
            handle.write("header " + plane.control.capability)
        deadline = Deadline(SHORT_TIMEOUT_S)
        while not plane.runs[0].watch.file_hits and not deadline.over():
            time.sleep(0.01)
        os.remove(path)
        plane.wait()
        names = self.names(plane)
        self.assertIn("SESSION-SECRET-2", names)
        self.assertNotIn("SESSION-ISOLATION-9", names)

    def test_a_file_left_in_tmpdir_and_a_secret_in_argv_break_invariants(self):
        plane = self.plane(toy=LITTERER)
        plane.run()
        self.assertIn("SESSION-ISOLATION-9", self.names(plane))
        clean = self.plane()
        clean.run(argv=["--token", clean.control.capability])
        names = self.names(clean)
        self.assertIn("SESSION-SECRET-2", names)
        self.assertNotIn("SESSION-ISOLATION-9", names)

    def test_a_clean_toy_run_breaks_only_the_summary_rule(self):
        plane = self.plane()
        plane.run()
        self.assertEqual(self.names(plane), ["SESSION-EXIT-2"])    # a toy writes no summary

    def test_a_process_left_in_a_session_of_its_own_is_found_and_killed(self):
        plane = self.plane(toy=DESERTER % TOY_SLEEP_S)
        plane.run(pid1=False)   # as PID 1 the kernel would end it with the node
        seen = [p for p in plane.runs[0].watch.processes() if p.pid != plane.result.host_pid]
        self.assertEqual(len(seen), 1)
        with unittest.mock.patch.object(watch, "LEFTOVER_GRACE_S", 0.1):   # it will not die by itself
            self.assertIn("SESSION-ISOLATION-3, -4", self.names(plane))
        self.assertEqual(plane.runs[0].watch.leftovers(SHORT_TIMEOUT_S), [])   # killed

    def test_a_report_is_waited_for_and_the_capability_stays_at_the_control_plane(self):
        plane = self.plane(toy=SLEEPER % 2)
        source = plane.add_source(rows=[["a"]])
        probe_id = plane.probe("source_inspect", source)
        plane.start()
        client = self.leased(plane)
        status, answer, _headers = client.claim()
        self.assertEqual((status, answer["probe"]["request"]), (200, {"source_id": source.source_id}))
        client.report(probe_id)
        self.assertEqual(plane.wait_report(probe_id).status, 200)
        plane.proc.signal(9)
        plane.wait()
        self.assertEqual([n for n in self.names(plane) if n.startswith("SESSION-SECRET")], [])


class SummaryTest(unittest.TestCase):
    def test_summaries_are_canonical_lines_of_the_schema(self):
        good = {"status": "failed", "role": "session", "session_id": None, "attempt_id": None,
                "probes_answered": 0, "probes_failed": 0, "terminal_state": None,
                "failure_code": "SESSION_DISPATCH_URL_UNRECOGNIZED", "warm_pool_ready": 0}
        line = json.dumps(good, sort_keys=True, separators=(",", ":"))
        self.assertEqual(parse_summaries(line + "\n"), ([good], []))
        self.assertEqual(parse_strict(line.encode()), good)
        spaced = json.dumps(good, sort_keys=True)
        stopped = dict(good, status="stopped")
        summaries, problems = parse_summaries("%s\n%s\nhello\n%s" % (spaced, json.dumps(stopped), line))
        self.assertEqual(summaries, [good])
        self.assertEqual(len(problems), 4, problems)   # not canonical, failed keys, not JSON, no newline


class WatchTest(unittest.TestCase):
    """What the watch records of a process that is already exiting."""

    def test_a_zombie_leaves_no_empty_argv(self):
        # The parent forks a child that exits at once and is never reaped: a zombie, whose
        # cmdline reads empty. Recorded, that empty argv would be the child's last one and hide
        # what it ran (secret.places once missed a probe child this way under load).
        parent = subprocess.Popen([sys.executable, "-c", "import os, time\nif os.fork() == 0:\n    os._exit(0)\n"
                                   "time.sleep(%r)" % SHORT_TIMEOUT_S])
        self.addCleanup(parent.wait)
        self.addCleanup(parent.kill)
        proc = unittest.mock.Mock(host_pid=parent.pid, running=lambda: parent.poll() is None)
        seer = watch.Watch.__new__(watch.Watch)  # sampled by hand: no thread
        seer.proc, seer.scratch, seer._secrets = proc, "/nonexistent-scratch", lambda: []
        seer._lock, seer._seen, seer._files = threading.Lock(), {}, {}
        seer.file_hits, seer.files_seen = [], set()
        deadline = Deadline(SHORT_TIMEOUT_S)
        while not any(state == "Z" for state in self.child_states(parent.pid)) and not deadline.over():
            time.sleep(0.01)
        self.assertIn("Z", self.child_states(parent.pid))
        seer.sample()
        self.assertTrue(seer.processes())  # the parent at least
        self.assertEqual([p for p in seer.processes() if [] in p.argvs], [])

    @staticmethod
    def child_states(pid):
        return [watch._stat(child)[0] for child in descendants(pid) if watch._stat(child)]


if __name__ == "__main__":
    unittest.main()
