"""The crawler plane without a node: a well-behaved client drives its fakes.

The client here does what contract/crawler.md asks of a node, with http.client
and the test CA: mint a token, redeem, fetch, build the result with the
harness's own documents, PUT it through the capability with the seven headers.
The plane's invariants must then be clean, and each way a node can go wrong
(a second redemption, a wrong audience, a tripwire connection, a leaked
secret) must show up where a check will look for it.
"""

import http.client
import inspect
import json
import os
import shutil
import ssl
import subprocess
import time
import unittest
import urllib.parse

from conformance import faults
from conformance.checks import Check, Context, NodeSpec
from conformance.faults import Match
from conformance.planes import crawler_docs as docs
from conformance.planes.crawler import (AUDIENCE_BASE, CA_FILE, EXECUTION, SESSION_ID, Broker, CrawlerPlane,
                                        GeneratedJsonl, SourceSite)
from conformance.planes.metadata import IDENTITY_PATH, MetadataServer
from conformance.runner import RunResult
from conformance.timeouts import SHORT_TIMEOUT_S

CHECK = Check("plane.selftest", "crawler", "PLANE", ["CRAWLER-REPORT-3"], "MUST", "plane self-test", "", "", None)


def tls_context():
    return ssl.create_default_context(cafile=CA_FILE)


def fake_run(exit_code=0, stderr="", stdout="", argv=None, env=None):
    """A RunResult as the runner would make it for a node that did this."""
    return RunResult(exit_code=exit_code, stderr=stderr, stdout=stdout, host_pid=2 ** 22 + 7,
                     cmdline_snapshot=argv or ["python3", "node.py", "--crawler-session-id", SESSION_ID],
                     environ_snapshot=env or {}, seen_cmdlines={}, t_exit=time.monotonic())


class Client(object):
    """A well-behaved crawler job, one step per method."""

    def __init__(self, plane):
        self.plane = plane
        self.env = plane.env()
        base = urllib.parse.urlsplit(self.env["MOSTLYRIGHT_CRAWLER_BOOTSTRAP_URL_BASE"])
        self.broker_host, self.broker_port, self.broker_path = base.hostname, base.port, base.path

    def mint(self, route="redeem", flavor=True):
        host, port = self.env["GCE_METADATA_HOST"].split(":")
        audience = "%s/%s:%s" % (self.env["MOSTLYRIGHT_CRAWLER_BOOTSTRAP_AUDIENCE_BASE"], SESSION_ID, route)
        conn = http.client.HTTPConnection(host, int(port), timeout=SHORT_TIMEOUT_S)
        try:
            conn.request("GET", IDENTITY_PATH + "?" + urllib.parse.urlencode({"audience": audience, "format": "full"}),
                         headers={"Metadata-Flavor": "Google"} if flavor else {})
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def post(self, route, token, body=None, execution=EXECUTION):
        conn = http.client.HTTPSConnection(self.broker_host, self.broker_port, context=tls_context(),
                                           timeout=SHORT_TIMEOUT_S)
        headers = {"Accept": "application/json", "Authorization": "Bearer " + token.decode("ascii")}
        if execution is not None:
            headers["X-Mostlyright-Cloud-Run-Execution"] = execution
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            conn.request("POST", "%s/%s:%s" % (self.broker_path, SESSION_ID, route), body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def redeem(self):
        status, token = self.mint("redeem")
        assert status == 200, status
        return self.post("redeem", token)

    def fetch(self, url, max_redirects=5):
        """Follow redirects by hand; return (raw bytes, evidence) as FETCH-8 records it."""
        hops = []
        for _ in range(max_redirects + 1):
            split = urllib.parse.urlsplit(url)
            conn = http.client.HTTPSConnection(split.hostname, split.port, context=tls_context(),
                                               timeout=SHORT_TIMEOUT_S)
            try:
                conn.putrequest("GET", split.path, skip_accept_encoding=True)
                for name, value in (("User-Agent", docs.USER_AGENT), ("Accept-Encoding", "identity"),
                                    ("Connection", "close")):
                    conn.putheader(name, value)
                conn.endheaders()
                peer, version = conn.sock.getpeername()[0], conn.sock.version()
                response = conn.getresponse()
                length = response.getheader("Content-Length")
                hops.append(docs.make_hop(url, response.status, response.getheader("Location"),
                                          response.getheader("Content-Type"),
                                          int(length) if length is not None else None,
                                          response.getheader("ETag"), response.getheader("Last-Modified"),
                                          peer, version))
                raw = response.read()
            finally:
                conn.close()
            if response.status in (301, 302, 303, 307, 308):
                url = urllib.parse.urljoin(url, response.getheader("Location"))
                continue
            return raw, docs.make_evidence(hops, docs.sha256_hex(raw), len(raw))
        raise AssertionError("too many redirects")

    def result_for(self, request, raw, evidence):
        query = request["query"]
        header = docs.input_header(request, docs.make_retrieval(query["url"], evidence), docs.clean_room())
        return docs.canonical(docs.build_result(header, docs.normalize_bytes(raw, query["data_format"],
                                                                             query["limits"])))

    def put(self, capability, body):
        split = urllib.parse.urlsplit(capability["upload_url"])
        conn = http.client.HTTPSConnection(split.hostname, split.port, context=tls_context(),
                                           timeout=SHORT_TIMEOUT_S)
        try:
            conn.putrequest("PUT", split.path + "?" + split.query, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", split.netloc)
            conn.putheader("Content-Length", str(len(body)))
            for header in capability["required_headers"]:
                conn.putheader(header["name"], header["value"])
            conn.endheaders(body)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def whole_run(self):
        """Redeem, fetch, normalise, PUT: what a successful node does."""
        status, raw = self.redeem()
        assert status == 200, (status, raw)
        boot = json.loads(raw.decode("utf-8"))
        request, capability = boot["request"], boot["upload_capability"]
        data, evidence = self.fetch(request["query"]["url"])
        body = self.result_for(request, data, evidence)
        status, answer = self.put(capability, body)
        assert status == 200, (status, answer)
        return body


class PlaneTest(unittest.TestCase):
    def setUp(self):
        self.ctx = Context(CHECK, NodeSpec(["true"]))
        self.planes = []

    def tearDown(self):
        for plane in self.planes:
            plane.close()
        shutil.rmtree(self.ctx.tmp, ignore_errors=True)

    def plane(self, **options):
        plane = CrawlerPlane(self.ctx, **options)
        self.planes.append(plane)
        return plane

    def names(self, violations):
        return [v.name for v in violations]

    # ---------------------------------------------------------------- a good run
    def test_well_behaved_client_leaves_clean_invariants(self):
        plane = self.plane(source_etag='"v1"', source_last_modified="Sat, 05 Jan 2024 10:00:00 GMT")
        client = Client(plane)
        body = client.whole_run()
        plane.result = fake_run(0, env=client.env)
        self.assertEqual(plane.invariants(), [])
        stored = plane.stored_result()
        self.assertIsNotNone(stored)
        self.assertEqual(stored.raw, body)
        self.assertEqual(stored.obj.content_type, docs.RESULT_MEDIA_TYPE)
        self.assertEqual(plane.verify_result(stored.raw), [])
        self.assertEqual(plane.status_line(), None)

        # What the plane recorded on the way.
        [identity] = plane.metadata.requests()
        self.assertEqual(identity.audience, "%s/%s:redeem" % (AUDIENCE_BASE, SESSION_ID))
        self.assertEqual((identity.format, identity.flavor, identity.authorization), ("full", "Google", False))
        [redeem] = plane.broker.redeems()
        self.assertEqual((redeem.status, redeem.token_seq, redeem.problems), (200, 1, []))
        [hop] = plane.site.requests()
        self.assertEqual((hop.target, hop.address, hop.leaked), ("/data.csv", "127.0.0.1", []))
        self.assertTrue(hop.tls_version.startswith("TLSv1"))
        [put] = plane.puts()
        self.assertEqual([n for n, _ in put.headers][:2], ["Host", "Content-Length"])
        self.assertEqual(plane.stored_bundle(), None)
        self.assertEqual(plane.broker.fails(), [])

    def test_a_lie_in_the_result_is_found(self):
        plane = self.plane()
        client = Client(plane)
        client.whole_run()
        doc = docs.parse_canonical(plane.stored_result().raw)
        doc["acquisition_receipt"]["acquired_at"] = "2030-01-01T00:00:00Z"
        doc["observation"]["row_count"] += 1
        problems = plane.verify_result(docs.canonical(doc))
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("acquisition_receipt.acquired_at", problems[0])
        self.assertIn("observation.row_count", problems[1])
        self.assertIn("not canonical", plane.verify_result(json.dumps(doc).encode())[0])

    def test_another_normalisers_result_is_judged_by_its_own_content(self):
        # A node whose normaliser lower-cases the values: its result keeps every
        # platform rule, and only the reference comparison (example work) differs.
        plane = self.plane()
        client = Client(plane)
        status, raw = client.redeem()
        self.assertEqual(status, 200)
        boot = json.loads(raw.decode("utf-8"))
        request, capability = boot["request"], boot["upload_capability"]
        data, evidence = client.fetch(request["query"]["url"])
        reference = docs.normalize_bytes(data, "csv", request["query"]["limits"])
        lines = reference.content.decode("utf-8").split("\n")
        content = (lines[0] + "\n" + "\n".join(line.lower() for line in lines[1:])).encode("utf-8")
        header = docs.input_header(request, docs.make_retrieval(request["query"]["url"], evidence),
                                   docs.clean_room())
        body = docs.canonical(docs.build_result(header, docs.read_content(content, "csv")))
        self.assertEqual(client.put(capability, body)[0], 200)
        plane.result = fake_run(0, env=client.env)
        self.assertEqual(plane.invariants(), [])
        self.assertEqual(plane.verify_result(body), [])
        problems = plane.reference_problems(body)
        self.assertTrue(any("normalized_content" in problem for problem in problems), problems)
        self.assertEqual(plane.reference_problems(client.result_for(request, data, evidence)), [])

    def test_redirect_hops_are_rebuilt_exactly(self):
        plane = self.plane()
        plane.site.redirect("/old", "/data.csv", status=301)
        first = plane.site.redirect("/older", plane.site.url("/old"), status=307)
        plane.broker.source_url = first
        client = Client(plane)
        client.whole_run()
        evidence, exact = plane.transport_evidence()
        self.assertTrue(exact)
        self.assertEqual([h["url"] for h in evidence["hops"]],
                         [first, plane.site.url("/old"), plane.site.url("/data.csv")])
        plane.result = fake_run(0)
        self.assertEqual(plane.invariants(), [])

    def test_reported_failure_needs_its_bundle(self):
        plane = self.plane()
        client = Client(plane)
        status, raw = client.redeem()
        boot = json.loads(raw.decode("utf-8"))
        line = docs.status_line("CRAWLER_SOURCE_HTTP_STATUS", "reported").decode()
        plane.result = fake_run(0, stderr=line)
        self.assertEqual(plane.status_line(), ("CRAWLER_SOURCE_HTTP_STATUS", "reported"))
        self.assertIn('CRAWLER-REPORT-2: "reported" means the bundle is stored', self.names(plane.invariants()))
        bundle = docs.canonical(docs.failure_bundle(boot["request"], "CRAWLER_SOURCE_HTTP_STATUS"))
        self.assertEqual(client.put(boot["upload_capability"], bundle)[0], 200)
        self.assertEqual(plane.invariants(), [])
        # Create-only: a second PUT through the same URL is refused.
        self.assertEqual(client.put(boot["upload_capability"], bundle)[0], 412)

    # ---------------------------------------------------------------- the broker
    def test_redeem_is_single_use(self):
        plane = self.plane()
        client = Client(plane)
        self.assertEqual(client.redeem()[0], 200)
        status, body = client.redeem()
        self.assertEqual(status, 409)
        self.assertEqual([c.status for c in plane.broker.redeems()], [200, 409])
        self.assertIn("CRAWLER-BOOT-2: one redemption, never retried", self.names(plane.invariants()))

    def test_bad_tokens_are_refused_and_spend_nothing(self):
        plane = self.plane()
        client = Client(plane)
        _, fail_token = client.mint("fail")
        self.assertEqual(client.post("redeem", fail_token)[0], 401)
        self.assertEqual(client.post("redeem", b"aaaa.bbbb.cccc")[0], 401)
        _, token = client.mint("redeem")
        self.assertEqual(client.post("redeem", token, execution=None)[0], 400)
        self.assertEqual(client.post("redeem", token)[0], 401)      # presented before
        self.assertEqual([c.refusal.split(" ")[0] for c in plane.broker.redeems()],
                         ["token", "token", "execution", "token"])
        self.assertIn("another audience", plane.broker.redeems()[0].refusal)
        self.assertEqual(plane.broker.bootstrap_bytes, None)                  # nothing redeemed yet
        self.assertEqual(client.redeem()[0], 200)

    def test_fail_route_records_the_report(self):
        plane = self.plane()
        client = Client(plane)
        _, token = client.mint("fail")
        body = b'{"failure_code":"CRAWLER_BOOTSTRAP_RESPONSE_INVALID"}'
        status, answer = client.post("fail", token, body=body, execution=None)
        self.assertEqual((status, answer), (204, b""))
        [call] = plane.broker.fails()
        self.assertEqual((call.doc, call.canonical, call.problems, call.token_seq),
                         ({"failure_code": "CRAWLER_BOOTSTRAP_RESPONSE_INVALID"}, True, [], 1))
        plane.result = fake_run(1, stderr=docs.status_line("CRAWLER_BOOTSTRAP_RESPONSE_INVALID", "failed").decode())
        self.assertEqual(plane.invariants(), [])
        plane.result = fake_run(1, stderr=docs.status_line("CRAWLER_BOOTSTRAP_REDEMPTION_FAILED", "failed").decode())
        self.assertIn("CRAWLER-FAIL-2: the status line names the reported code", self.names(plane.invariants()))

    def test_fail_answer_is_an_option_and_a_redeem_fault_hits_only_redeem(self):
        plane = self.plane(fail_status=500, fail_body=b'{"error": 1}')
        rule = plane.broker.add_fault(faults.status(503), plane.broker.redeem_match())
        client = Client(plane)
        self.assertEqual(client.redeem()[0], 503)
        _, token = client.mint("fail")
        self.assertEqual(client.post("fail", token, body=b"{}", execution=None), (500, b'{"error": 1}'))
        self.assertEqual(plane.broker.fails()[0].problems, ['body is not exactly {"failure_code": ...}'])
        self.assertEqual(rule.applied, 1)

    # ---------------------------------------------------------------- fakes: options and faults
    def test_faults_enter_every_fake_the_same_way(self):
        plane = self.plane()
        client = Client(plane)
        rules = {
            "metadata": plane.metadata.add_fault(faults.status(500), plane.metadata.identity_match(first=1)),
            "fail": plane.broker.add_fault(faults.status(502), plane.broker.fail_match()),
            "source": plane.site.add_fault(faults.status(404), plane.site.source_match("/elsewhere.csv")),
            "store": plane.store.add_fault(faults.status(503), Match(method="PUT", first=1)),
            "tripwire": plane.tripwire.add_fault(faults.hang()),
        }
        self.assertEqual(client.mint()[0], 500)              # the first identity request only
        boot = json.loads(client.redeem()[1].decode("utf-8"))
        request, capability = boot["request"], boot["upload_capability"]
        body = client.result_for(request, *client.fetch(request["query"]["url"]))   # /data.csv: not faulted
        self.assertEqual(client.put(capability, body)[0], 503)     # the first PUT only
        self.assertEqual(client.put(capability, body)[0], 200)
        _, token = client.mint("fail")
        self.assertEqual(client.post("fail", token, body=b"{}", execution=None)[0], 502)
        self.assertEqual(dict((name, rule.applied) for name, rule in rules.items()),
                         {"metadata": 1, "fail": 1, "source": 0, "store": 1, "tripwire": 0})

    def test_options_reach_their_fake(self):
        plane = self.plane(identity_status=201, redeem_status=500, source_etag='"e"', source_path="/x.csv",
                           timeouts={"fetch": 3})
        self.assertEqual((plane.metadata.identity_status, plane.broker.redeem_status), (201, 500))
        self.assertEqual(plane.broker.source_url, plane.site.url("/x.csv"))
        self.assertEqual(plane.site.requests(), [])
        self.assertEqual(plane.broker.attestation, docs.digest(plane.policy))
        with self.assertRaises(TypeError):
            self.plane(redeem_faults=[faults.hang()])     # faults go in through add_fault only
        for fake in (MetadataServer, Broker, SourceSite):   # each option a keyword of its fake
            self.assertLessEqual(set(fake.OPTIONS), set(inspect.signature(fake.__init__).parameters), fake)

    # ---------------------------------------------------------------- the metadata server
    def test_identity_answers(self):
        plane = self.plane(identity_body="newline")
        client = Client(plane)
        self.assertEqual(client.mint(flavor=False)[0], 403)
        status, token = client.mint()
        self.assertEqual(status, 200)
        self.assertTrue(token.endswith(b"\n"))
        payload = json.loads(__import__("base64").urlsafe_b64decode(token.split(b".")[1] + b"==="))
        self.assertEqual(payload["aud"], "%s/%s:redeem" % (AUDIENCE_BASE, SESSION_ID))
        self.assertTrue(payload["conformance_marker"].startswith("CANARY"))
        self.assertEqual([r.status for r in plane.metadata.requests()], [403, 200])

    # ---------------------------------------------------------------- invariants that must fire
    def test_tripwire_connection_breaks_an_invariant(self):
        plane = self.plane()
        conn = http.client.HTTPConnection("127.0.0.1", plane.tripwire.port, timeout=SHORT_TIMEOUT_S)
        try:
            conn.request("GET", "/")
            conn.getresponse()
        except (OSError, http.client.HTTPException):
            pass  # a plain-HTTP client meeting a TLS server: the connection is what counts
        finally:
            conn.close()
        self.assertTrue(plane.tripwire.wait_until(lambda: plane.tripwire.connections, SHORT_TIMEOUT_S))
        self.assertIn("no connection to the tripwire", self.names(plane.invariants()))

    def test_secrets_in_output_and_bad_status_lines_are_found(self):
        plane = self.plane()
        client = Client(plane)
        client.redeem()
        token = plane.metadata.tokens()[0].token
        query = plane.broker.upload_url.split("?", 1)[1]
        for stderr in ("boom " + token + "\n", "PUT failed: " + query + "\n"):
            plane.result = fake_run(1, stderr=stderr)
            self.assertIn("CRAWLER-SECRET-2: secrets stay where they belong", self.names(plane.invariants()))
        plane.result = fake_run(1, argv=["node.py", "--token", token])
        self.assertIn("the node's argv", plane.invariants()[0].expected)
        plane.result = fake_run(1, stdout="progress\n", stderr="Traceback (most recent call last):\n  x\n")
        names = self.names(plane.invariants())
        for name in ("CRAWLER-REPORT-5: no traceback", "CRAWLER-REPORT-3: stdout stays empty",
                     "CRAWLER-REPORT-3: stderr is empty or one status line"):
            self.assertIn(name, names)
        plane.result = fake_run(1, stderr='{"code":"CRAWLER_OOPS","status":"failed"}\n')
        self.assertIn("CRAWLER-REPORT-1: a code not in the table is never produced", self.names(plane.invariants()))
        plane.result = fake_run(1, stderr='{"status":"failed","code":"CRAWLER_JOB_FAILED"}\n')
        self.assertEqual(plane.status_line(), None)
        plane.result = fake_run(143, stderr=docs.status_line("CRAWLER_JOB_FAILED", "failed").decode())
        self.assertIn("CRAWLER-REPORT-4: the exit status agrees with the status line", self.names(plane.invariants()))
        plane.result = fake_run(0)
        self.assertIn("CRAWLER-REPORT-4: exit 0 means the result was stored", self.names(plane.invariants()))
        plane.result = fake_run(2, stderr="usage: node --crawler-session-id ID\n")
        self.assertEqual(plane.invariants(), [])
        with open(os.path.join(plane.scratch, "spool"), "wb"):
            pass
        self.assertIn("CRAWLER-STREAM-3: TMPDIR left empty", self.names(plane.invariants()))

    def test_a_child_left_running_is_found_and_killed(self):
        plane = self.plane()
        orphan = subprocess.Popen(["sleep", "60"])
        try:
            time.sleep(0.05)   # started, and seen, before the "node" exits (the plane waits 1 s for it)
            run = fake_run(143, stderr=docs.status_line("CRAWLER_CANCELLED", "failed").decode())
            run.seen_cmdlines = {run.host_pid: ["node"], orphan.pid: ["sleep", "60"]}
            plane.result = run
            violations = plane.invariants()
            self.assertEqual(self.names(violations), ["CRAWLER-CHILD-10: no child outlives the run"])
            self.assertEqual(orphan.wait(SHORT_TIMEOUT_S), -9)
        finally:
            if orphan.poll() is None:
                orphan.kill()
                orphan.wait()
        # A SIGKILL the harness sent is not the node's exit status to answer for.
        run = fake_run(-9)
        run.signals = [(time.monotonic(), 9)]
        plane.result = run
        self.assertEqual(plane.invariants(), [])

    def test_a_secret_in_a_source_request_is_found(self):
        plane = self.plane()
        client = Client(plane)
        _, token = client.mint()
        conn = http.client.HTTPSConnection("localhost", plane.site.port, context=tls_context(),
                                           timeout=SHORT_TIMEOUT_S)
        try:
            conn.request("GET", "/data.csv", headers={"X-Debug": token.decode()})
            conn.getresponse().read()
        finally:
            conn.close()
        self.assertEqual(plane.site.requests()[0].leaked, ["identity token #1"])
        self.assertIn("CRAWLER-SECRET-2: secrets stay where they belong", self.names(plane.invariants()))

    # ---------------------------------------------------------------- environment and sources
    def test_environment(self):
        plane = self.plane(timeouts={"bootstrap": 2, "child": 0.5}, extra_env={"HTTPS_PROXY": "x"},
                           drop_env=["LANG"])
        env = plane.env()
        self.assertEqual(env["MOSTLYRIGHT_CRAWLER_BOOTSTRAP_TIMEOUT_S"], "2")
        self.assertEqual(env["MOSTLYRIGHT_CRAWLER_CHILD_TIMEOUT_S"], "0.5")
        self.assertNotIn("LANG", env)
        self.assertEqual(env["HTTPS_PROXY"], "x")
        policy = docs.parse_canonical(env["MOSTLYRIGHT_CRAWLER_EGRESS_POLICY"].encode())
        self.assertEqual((policy["allowed_hosts"], policy["allowed_ports"]), (["localhost"], [plane.site.port]))
        self.assertEqual(plane.args(), ["--crawler-session-id", SESSION_ID])

    def test_scripted_child_is_pinned_and_its_record_scanned(self):
        plane = self.plane(child={"mode": "normal"})
        env = plane.env()
        self.assertTrue(os.access(env["MOSTLYRIGHT_CRAWLER_CHILD"], os.X_OK))
        client = Client(plane)
        client.redeem()
        token = plane.metadata.tokens()[0].token
        child_env = dict(docs.THREAD_PINS, **{docs.ATTESTATION_ENV: plane.broker.attestation, "LEAK": token})
        completed = subprocess.run([plane.child.path, "--input-fd", "0", "--result-fd", "1"], input=b"",
                                   env=child_env, cwd="/", capture_output=True, timeout=SHORT_TIMEOUT_S)
        self.assertEqual(completed.returncode, 1)   # no header: the reference child's refusal
        record = plane.child.record()
        self.assertEqual(record["argv"][1:], ["--input-fd", "0", "--result-fd", "1"])
        plane.result = fake_run(1)
        self.assertIn("the child's record", " ".join(v.expected for v in plane.invariants()))

    def test_generated_jsonl_streams_and_normalises_small(self):
        source = GeneratedJsonl(5 * 1024 * 1024 + 123)
        whole = b"".join(bytes(b) for b in source.iter_blocks(0, source.length, 1 << 20))
        self.assertEqual(len(whole), source.length)
        self.assertEqual(docs.sha256_hex(whole), source.sha256())
        self.assertEqual(b"".join(bytes(b) for b in source.iter_blocks(70000, 200000, 4096)), whole[70000:200000])
        normalized = docs.normalize_bytes(whole, "jsonl", docs.default_limits())
        self.assertEqual(normalized.row_count, source.lines)
        self.assertLess(len(normalized.content), 16 * 1024)

        plane = self.plane(source=GeneratedJsonl(3 * 1024 * 1024 + 5))
        Client(plane).whole_run()
        self.assertEqual(plane.broker.request["query"]["data_format"], "jsonl")
        plane.result = fake_run(0)
        self.assertEqual(plane.invariants(), [])


if __name__ == "__main__":
    unittest.main()
