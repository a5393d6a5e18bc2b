"""The scan plane without the scan node: a small client written here drives the fake scan server.

The client does what contract/scan.md asks of a scan worker on the wire (claim with a request
id, read the status, send progress, upload a bundle with its digest, send a terminal report),
with http.client over TLS trusting the test CA. The server must answer as the contract says and
record what it saw; the bundle judge must accept a good bundle and name each defect; the
invariants must fire on a planted fault (and only then). Toy processes stand in for the node
where a life is needed. And no class of any plane (conformance/planes/) may grow past
MAX_CLASS_LINES: the scan plane and its server were split so, and this keeps them so.
"""

import ast
import hashlib
import http.client
import json
import os
import shutil
import ssl
import sys
import unittest
import urllib.error
import urllib.parse
import urllib.request

from conformance import faults
from conformance.checks import Check, Context, NodeSpec
from conformance.clauses import REPO_ROOT
from conformance.planes.scan import (DELETE, ScanPlane, build_bundle, bundle_problems, canonical, expectation,
                                     slot_file_problems, unsafe_lines)
from conformance.planes.scan.bundles import MAX_BUNDLE_LINE_BYTES
from conformance.servers import CA_FILE
from conformance.timeouts import SHORT_TIMEOUT_S

CHECK = Check("plane.selftest", "scan", "PLANE", ["SCAN-SECRET-1"], "MUST", "plane self-test", "", "", None)
BUILD = {"capabilities": [["fixture", "local", "files"]], "code_sha256": "c" * 64, "node": "test-client",
         "protocol": 2, "version": "0"}
REPORT = {"detail": "local worker execution failed", "failure_code": "client_process_failed"}
# A stand-in for the node: prints the ready line and exits (the argv the plane adds is ignored).
QUIET = "print('worker: started with 1 slots', flush=True)"
# Another: a worker that claims once with a request id it persisted first, then waits.
CLAIMER = r"""
import http.client, json, os, secrets, ssl, sys, time, urllib.parse
args = sys.argv[1:]
origin = urllib.parse.urlsplit(args[args.index("--server") + 1])
token = open(args[args.index("--token-file") + 1]).read().strip()
state = os.path.join(os.environ["XDG_STATE_HOME"], "truf", "remote-worker")
os.makedirs(state, mode=0o700, exist_ok=True)
slot = os.path.join(state, "slot-0.json")
try:
    request_id = json.load(open(slot))["request_id"]
except OSError:
    request_id = secrets.token_hex(16)
    with open(slot + ".tmp", "w") as out:
        out.write(json.dumps({"phase": "claiming", "request_id": request_id, "schema": 2}, sort_keys=True,
                             separators=(",", ":")))
    os.replace(slot + ".tmp", slot)
print("worker: started with 1 slots", flush=True)
body = json.dumps({"build": {}, "request_id": request_id}, sort_keys=True, separators=(",", ":")).encode()
conn = http.client.HTTPSConnection(origin.hostname, origin.port, context=ssl.create_default_context(), timeout=10)
conn.request("POST", "/api/v1/worker/claim", body, {"Authorization": "Bearer " + token,
                                                    "Content-Type": "application/json"})
status = conn.getresponse().status
print("worker slot 0: reservation 1 resolved (expired)" if status == 201 else "unexpected %d" % status, flush=True)
"""
# Another: leaves a slot file that is not canonical, prints a line that is not safe, and
# writes a piece of the token into the bundle tree.
LITTERER = r"""
import os, sys
args = sys.argv[1:]
token = open(args[args.index("--token-file") + 1]).read().strip()
state = os.path.join(os.environ["XDG_STATE_HOME"], "truf", "remote-worker")
os.makedirs(state, exist_ok=True)
open(os.path.join(state, "slot-0.json"), "w").write('{"schema": 2, "phase": "claiming"}')
print("worker: started with 1 slots")
print("error: https://example.invalid/x?X-Amz-Signature=...")
"""


def tls_context():
    return ssl.create_default_context(cafile=CA_FILE)


class Client(object):
    """A scan worker on the wire, one request per method, each on its own connection."""

    def __init__(self, plane):
        self.plane = plane
        split = urllib.parse.urlsplit(plane.server.origin)
        self.host, self.port = split.hostname, split.port

    def send(self, method, path, body=None, token=None, headers=()):
        """(status, parsed answer or raw bytes or None, headers) of one request."""
        data = body if body is None or isinstance(body, bytes) else canonical(body)
        conn = http.client.HTTPSConnection(self.host, self.port, context=tls_context(), timeout=SHORT_TIMEOUT_S)
        try:
            conn.putrequest(method, path)
            conn.putheader("Authorization", "Bearer " + (self.plane.token if token is None else token))
            for name, value in headers:
                conn.putheader(name, value)
            if data is not None:
                if not any(name.lower() == "content-type" for name, _v in headers):
                    conn.putheader("Content-Type", "application/json")
                conn.putheader("Content-Length", str(len(data)))
            conn.endheaders(data)
            response = conn.getresponse()
            raw = response.read()
            try:
                doc = json.loads(raw.decode("utf-8")) if raw else None
            except ValueError:
                doc = raw
            return response.status, doc, dict((k.lower(), v) for k, v in response.getheaders())
        finally:
            conn.close()

    def claim(self, request_id, **options):
        return self.send("POST", "/api/v1/worker/claim", {"build": BUILD, "request_id": request_id}, **options)

    def status(self, rid, **options):
        return self.send("GET", "/api/v1/worker/assignments/%d" % int(rid), **options)

    def progress(self, rid, sequence):
        event = {"sequence": sequence, "slot_id": 0, "phase": "scanning", "reservation_id": int(rid),
                 "source": "fixture", "scan_deadline_at": None, "assignment_deadline_at": None,
                 "progress": {"attempt": 1}, "timestamp": "2026-01-01T00:00:00.000Z",
                 "phase_started_at": "2026-01-01T00:00:00.000Z"}
        return self.send("POST", "/api/v1/worker/assignments/%d/progress" % int(rid), event)

    def terminal(self, rid, body):
        return self.send("POST", "/api/v1/worker/assignments/%d/terminal" % int(rid), body)

    def put(self, rid, data, digest=None):
        digest = digest or hashlib.sha256(data).hexdigest()
        return self.send("PUT", "/api/v1/worker/assignments/%d/bundle" % int(rid), data,
                         headers=[("Content-Type", "application/octet-stream"), ("X-Truf-Payload-SHA256", digest)])


class PlaneTest(unittest.TestCase):
    def setUp(self):
        self.planes = []

    def tearDown(self):
        for plane in self.planes:
            for lives in plane.lifecycles:
                for life in lives.lives:
                    if life.running():
                        life.proc.wait(0)
            plane.close()

    def plane(self, toy=QUIET, **options):
        ctx = Context(CHECK, NodeSpec.from_command([sys.executable, "-c", toy]))
        self.addCleanup(shutil.rmtree, ctx.tmp, True)
        plane = ScanPlane(ctx, **options)
        self.planes.append(plane)
        return plane

    def names(self, plane):
        return sorted(set(v.name.split(":")[0] for v in plane.invariants()))


class ClaimTest(PlaneTest):
    def test_a_request_id_gets_one_reservation_and_a_new_one_the_next_or_no_work(self):
        plane = self.plane(no_work_reason="empty_queue")
        first, second = plane.add_assignment(), plane.add_assignment()
        client = Client(plane)
        status, doc, _headers = client.claim("a" * 32)
        self.assertEqual(status, 201)
        reservation = doc["assignment"]["reservation"]
        self.assertEqual((reservation["reservation_id"], reservation["bundle_id"]), (1, first.bundle_id))
        self.assertEqual((reservation["source"], reservation["platform"], doc["assignment"]["planning_kind"]),
                         ("fixture", "local", "files"))
        self.assertEqual(client.claim("a" * 32)[1], doc)                       # a replay: the same assignment
        self.assertEqual(client.claim("b" * 32)[1]["assignment"]["reservation"]["reservation_id"],
                         second.reservation_id)
        status, doc, headers = client.claim("c" * 32)
        self.assertEqual((status, doc, headers["retry-after"], headers["x-truf-no-work-reason"]),
                         (204, None, "1", "empty_queue"))
        self.assertEqual([c.replayed for c in plane.server.claims()], [False, True, False, False])
        self.assertEqual(plane.server.granted(), {"a" * 32: 1, "b" * 32: 2})
        self.assertEqual(plane.server.no_work_request_ids(), ["c" * 32])
        calls = plane.server.claims()
        self.assertEqual(calls[0].problems, [])
        self.assertEqual(calls[0].reservation, first)
        self.assertEqual(self.names(plane), [])

    def test_a_resolved_claim_is_answered_200_with_its_resolution(self):
        plane = self.plane()
        res = plane.add_assignment()
        client = Client(plane)
        client.claim("a" * 32)
        plane.resolve(res, "expired")
        status, doc, _headers = client.claim("a" * 32)
        self.assertEqual(status, 200)
        resolution = doc["resolution"]
        self.assertEqual((resolution["resolution"], resolution["reservation_id"], resolution["bundle_id"]),
                         ("expired", 1, res.bundle_id))
        self.assertRegex(resolution["receipt_id"], "^[a-f0-9]{64}$")

    def test_a_malformed_claim_and_a_wrong_token_are_refused_in_the_error_shape(self):
        plane = self.plane()
        client = Client(plane)
        status, doc, _headers = client.claim("a" * 32, token="x" * 48)
        self.assertEqual((status, doc["error"]["code"]), (401, "unauthorized"))
        self.assertIn(plane.server.marker, doc["error"]["message"])
        status, doc, _headers = client.send("POST", "/api/v1/worker/claim", {"request_id": "XYZ"})
        self.assertEqual((status, doc["error"]["code"]), (400, "invalid_request"))
        self.assertEqual(client.send("GET", "/api/v1/worker/claim")[0], 405)
        self.assertEqual([c.auth for c in plane.server.claims()], ["refused", "ok", "ok"])

    def test_scripted_claim_answers_grant_nothing(self):
        plane = self.plane()
        plane.add_assignment()
        plane.server.script_claim_answer(1, 201, {"assignment": {"reservation": {"reservation_id": 0}}})
        plane.server.script_claim_answer(2, 204, headers=[("Retry-After", "0")])
        client = Client(plane)
        status, doc, _headers = client.claim("a" * 32)
        self.assertEqual((status, doc), (201, {"assignment": {"reservation": {"reservation_id": 0}}}))
        status, _doc, headers = client.claim("a" * 32)
        self.assertEqual((status, headers.get("retry-after")), (204, "0"))
        self.assertEqual(plane.server.granted(), {})
        self.assertEqual(client.claim("a" * 32)[0], 201)
        self.assertEqual(plane.server.granted(), {"a" * 32: 1})

    def test_faults_on_the_claim_route_change_nothing(self):
        plane = self.plane()
        plane.add_assignment()
        plane.server.add_fault(faults.status(503, retry_after_s=2), plane.server.claim_match(first=1))
        plane.server.add_fault(plane.server.error_answer(429, "rate_limited"), plane.server.claim_match(first=1))
        client = Client(plane)
        status, _doc, headers = client.claim("a" * 32)
        self.assertEqual((status, headers["retry-after"]), (503, "2"))
        status, doc, _headers = client.claim("a" * 32)
        self.assertEqual((status, doc["error"]["code"]), (429, "rate_limited"))
        self.assertIn(plane.server.marker, doc["error"]["message"])
        self.assertEqual(plane.server.granted(), {})
        self.assertEqual(client.claim("a" * 32)[0], 201)
        self.assertEqual([c.status for c in plane.server.claims()], ["fault", "fault", 201])


class StatusAndProgressTest(PlaneTest):
    def test_the_status_is_flat_and_follows_the_server(self):
        plane = self.plane()
        res = plane.add_assignment(assignment_deadline_in_s=60)
        client = Client(plane)
        self.assertEqual(client.status(res)[0], 404)                      # not granted yet
        client.claim("a" * 32)
        status, doc, _headers = client.status(res)
        self.assertEqual(status, 200)
        self.assertEqual(sorted(doc), ["bundle_id", "expires_at", "failure_code", "payload_sha256", "receipt_id",
                                       "reservation_id", "resolution", "scan_event_id", "state"])
        self.assertEqual((doc["state"], doc["resolution"]), ("scanning", None))
        self.assertEqual(doc["expires_at"], res.doc["deadlines"]["assignment_deadline_at"])
        plane.set_status(res, bundle_id="f" * 32, status_error=None)
        self.assertEqual(client.status(res)[1]["bundle_id"], "f" * 32)
        plane.set_status(res, status_error=(410, "assignment_gone"))
        status, doc, _headers = client.status(res)
        self.assertEqual((status, doc["error"]["code"]), (410, "assignment_gone"))
        plane.server.add_fault(faults.hang(), plane.server.status_match(res, first=0))  # a match that never applies
        self.assertEqual(client.status(99)[0], 404)

    def test_progress_is_acknowledged_and_replays_are_flagged(self):
        plane = self.plane()
        res = plane.add_assignment()
        client = Client(plane)
        client.claim("a" * 32)
        status, doc, _headers = client.progress(res, 1)
        self.assertEqual(status, 200)
        self.assertEqual((doc["accepted"], doc["reservation_id"], doc["sequence"], doc["replayed"]),
                         (True, 1, 1, False))
        self.assertIsInstance(doc["received_at"], str)
        self.assertTrue(client.progress(res, 1)[1]["replayed"])
        self.assertFalse(client.progress(res, 2)[1]["replayed"])
        plane.resolve(res, "expired")
        status, doc, _headers = client.progress(res, 3)
        self.assertEqual((status, doc["error"]["code"]), (410, "progress_stale"))
        self.assertEqual([replayed for _c, _d, replayed in plane.server.progress_events()], [False, True, False, None])


class BundleUploadTest(PlaneTest):
    def test_an_upload_is_checked_stored_and_replayed_idempotently(self):
        plane = self.plane()
        res = plane.add_assignment()
        client = Client(plane)
        client.claim("a" * 32)
        data = build_bundle(res, slot_id=0, generation="1" * 32)
        status, doc, _headers = client.put(res, data, digest="0" * 64)
        self.assertEqual((status, doc["error"]["code"]), (400, "payload_digest_mismatch"))
        status, receipt, _headers = client.put(res, data)
        self.assertEqual(status, 200)
        self.assertEqual((receipt["resolution"], receipt["payload_sha256"]),
                         ("bundle_accepted", hashlib.sha256(data).hexdigest()))
        status, again, _headers = client.put(res, data)
        self.assertEqual((status, again["receipt_id"]), (200, receipt["receipt_id"]))
        self.assertEqual([(c.status, c.accepted, c.replayed) for c in res.puts],
                         [(400, False, False), (200, True, False), (200, False, True)])
        self.assertEqual(plane.bundle_problems(res, slot_id=0), [])
        with open(res.bundle_path, "rb") as handle:
            self.assertEqual(handle.read(), data)
        self.assertEqual(client.claim("a" * 32)[1]["resolution"]["payload_sha256"], receipt["payload_sha256"])
        self.assertEqual(self.names(plane), [])
        status, doc, _headers = client.put(res, data + b"{}\n")
        self.assertEqual((status, doc["error"]["code"]), (409, "bundle_conflict"))
        self.assertEqual(self.names(plane), ["SCAN-RECONCILE-1", "SCAN-UPLOAD-5"])

    def test_a_fault_on_the_bundle_route_accepts_nothing_and_sizes_are_bounded(self):
        plane = self.plane()
        res = plane.add_assignment(declared_bundle_bytes=64)
        client = Client(plane)
        client.claim("a" * 32)
        plane.server.add_fault(plane.server.error_answer(503, "unavailable"),
                               plane.server.bundle_match(res, phase="response", first=1))
        data = build_bundle(res)
        status, doc, _headers = client.put(res, data)
        self.assertEqual((status, doc["error"]["code"]), (503, "unavailable"))
        self.assertIsNone(res.resolution)
        status, doc, _headers = client.put(res, data)
        self.assertEqual((status, doc["error"]["code"]), (413, "payload_too_large"))
        self.assertEqual([c.body_sha256 for c in res.puts], [hashlib.sha256(data).hexdigest()] * 2)


class TerminalTest(PlaneTest):
    def test_a_report_resolves_once_and_other_bytes_conflict(self):
        plane = self.plane()
        res = plane.add_assignment()
        client = Client(plane)
        client.claim("a" * 32)
        big = dict(REPORT, detail="x" * 16400)
        self.assertEqual(client.terminal(res, big)[1]["error"]["code"], "payload_too_large")
        status, receipt, _headers = client.terminal(res, REPORT)
        self.assertEqual(status, 200)
        self.assertEqual((receipt["resolution"], receipt["failure_code"], receipt["payload_sha256"]),
                         ("prebundle_report", "client_process_failed", hashlib.sha256(canonical(REPORT)).hexdigest()))
        self.assertEqual(client.terminal(res, REPORT)[1]["receipt_id"], receipt["receipt_id"])
        status, doc, _headers = client.terminal(res, dict(REPORT, failure_code="client_storage_failed"))
        self.assertEqual((status, doc["error"]["code"]), (409, "terminal_conflict"))
        self.assertEqual([c.status for c in res.terminals], [413, 200, 200, 409])
        self.assertEqual(res.terminal_body, canonical(REPORT))
        self.assertEqual(client.put(res, build_bundle(res))[1]["error"]["code"], "already_resolved")
        self.assertIn("SCAN-RECONCILE-1", self.names(plane))


class TargetTest(PlaneTest):
    def test_a_target_is_served_behind_its_presigned_get_and_takes_faults(self):
        plane = self.plane()
        target = plane.add_target("lines.txt", chunks=[b"one\n", b"two\n"])
        big = plane.add_target("big.bin", size=3 << 20, seed=7)
        self.assertEqual(sorted(target), ["name", "sha256", "size", "url"])
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                             urllib.request.HTTPSHandler(context=tls_context()))
        with opener.open(target["url"], timeout=SHORT_TIMEOUT_S) as response:
            self.assertEqual(response.read(), b"one\ntwo\n")
        with opener.open(big["url"], timeout=SHORT_TIMEOUT_S) as response:
            self.assertEqual(hashlib.sha256(response.read()).hexdigest(), big["sha256"])
        plane.store.add_fault(faults.status(403, s3_code="AccessDenied"), plane.target_match(target, first=1))
        with self.assertRaises(urllib.error.HTTPError):
            opener.open(target["url"], timeout=SHORT_TIMEOUT_S)
        res = plane.add_assignment(targets=[target, big], patch={"planning_kind": DELETE})
        doc = plane.grant(res, "d" * 32)[1]
        self.assertNotIn("planning_kind", doc)
        self.assertEqual(doc["targets"], [target, big])


class BundleJudgeTest(PlaneTest):
    def setUp(self):
        PlaneTest.setUp(self)
        self.expect = {"reservation_id": 7, "bundle_id": "b" * 32, "scan_event_id": "e" * 32,
                       "execution_snapshot_sha256": "5" * 64, "declared_bundle_bytes": 4096,
                       "targets": [{"name": "a.txt", "size": 3, "sha256": "1" * 64},
                                   {"name": "b.txt", "size": 0, "sha256": "2" * 64}]}
        self.good = build_bundle(self.expect, slot_id=1, generation="9" * 32,
                                 events=[{"type": "finding", "target": "a.txt", "line": 1}])

    def lines(self):
        return self.good.split(b"\n")[:-1]

    def rebuild(self, lines, trailer=True):
        """Lines joined, with a fresh trailer over the events (trailer=False: as given)."""
        if trailer:
            events = b"".join(line + b"\n" for line in lines[1:-1])
            end = {"type": "end", "event_count": len(lines) - 2, "events_sha256": hashlib.sha256(events).hexdigest()}
            lines = lines[:-1] + [canonical(end)]
        return b"".join(line + b"\n" for line in lines)

    def assertNames(self, data, text, expect=None):
        problems = bundle_problems(data, expect or self.expect)
        self.assertTrue(any(text in p for p in problems), "%r not in %r" % (text, problems))

    def test_a_good_bundle_passes(self):
        self.assertEqual(bundle_problems(self.good, dict(self.expect, slot_id=1, generation="9" * 32)), [])
        timed_out = build_bundle(self.expect, status="timed_out", timeout_phase="scanning", done=["a.txt"])
        self.assertEqual(bundle_problems(timed_out, self.expect), [])

    def test_each_defect_is_named(self):
        lines = self.lines()
        header = json.loads(lines[0])
        self.assertNames(self.rebuild([canonical(dict(header, bundle_id="c" * 32))] + lines[1:]), "bundle_id")
        self.assertNames(self.rebuild([canonical(dict(header, extra=1))] + lines[1:]), "members")
        self.assertNames(self.rebuild([canonical(dict(header, timeout_phase="scanning"))] + lines[1:]),
                         "timeout_phase")
        self.assertNames(self.good, "slot_id is 1, not 2", dict(self.expect, slot_id=2))
        self.assertNames(self.rebuild(lines[:1] + [b'{"type": "x"}'] + lines[1:]), "line 2 is not canonical")
        long_line = canonical({"type": "note", "text": "x" * MAX_BUNDLE_LINE_BYTES})
        self.assertNames(self.rebuild(lines[:1] + [long_line] + lines[1:]), "longer than")
        end = json.loads(lines[-1])
        self.assertNames(self.rebuild(lines[:-1] + [canonical(dict(end, event_count=9))], False), "event_count 9")
        self.assertNames(self.rebuild(lines[:-1] + [canonical(dict(end, events_sha256="0" * 64))], False),
                         "events_sha256")
        self.assertNames(self.rebuild(lines[:-2] + lines[-1:]), "no target_done for b.txt")
        self.assertNames(self.rebuild([lines[0], lines[1], lines[3], lines[2], lines[4]]), "order")
        done = json.loads(lines[2])
        self.assertNames(self.rebuild(lines[:2] + [canonical(dict(done, bytes=4))] + lines[3:]), "says 4 bytes")
        self.assertNames(self.good, "more than declared", dict(self.expect, declared_bundle_bytes=100))
        self.assertNames(self.good + b'{"type":"x"}\n', "not the end line")
        self.assertNames(self.good[:-1], "newline")
        self.assertNames(b"", "empty")

    def test_expectation_of_a_reservation(self):
        plane = self.plane()
        res = plane.add_assignment()
        self.assertEqual(bundle_problems(build_bundle(res), expectation(res, slot_id=0)), [])


class TokenAndInvariantTest(PlaneTest):
    def test_the_token_file_rotates_and_the_server_follows(self):
        plane = self.plane(token_grace_s=30)
        with open(plane.token_file) as handle:
            self.assertEqual(handle.read(), plane.token + "\n")
        self.assertEqual((len(plane.token), os.stat(plane.token_file).st_mode & 0o777), (48, 0o600))
        client = Client(plane)
        old = plane.token
        plane.rotate_token()
        self.assertNotEqual(plane.token, old)
        self.assertEqual(client.claim("a" * 32, token=old)[0], 204)        # within the grace window
        plane.rotate_token(grace_s=0)
        self.assertEqual(client.claim("a" * 32, token=old)[0], 401)
        plane.write_token_file("short\n", mode=0o644)
        self.assertEqual(os.stat(plane.token_file).st_mode & 0o777, 0o644)
        self.assertEqual(client.claim("b" * 32)[0], 204)                    # the current token stays
        self.assertEqual([c.token_index for c in plane.server.claims()], [0, None, 2])

    def test_a_token_in_a_file_or_a_request_breaks_secret_1(self):
        plane = self.plane()
        self.assertEqual(self.names(plane), [])
        os.makedirs(plane.bundle_dir)
        with open(os.path.join(plane.bundle_dir, "leak.txt"), "w") as handle:
            handle.write("prefix " + plane.token[5:21] + " suffix")        # a 16-character piece
        violations = plane.invariants()
        self.assertEqual([v.name.split(":")[0] for v in violations], ["SCAN-SECRET-1"])
        self.assertIn("a 16-character piece", violations[0].actual)
        self.assertNotIn(plane.token[5:21], violations[0].actual)
        os.unlink(os.path.join(plane.bundle_dir, "leak.txt"))
        Client(plane).send("GET", "/api/v1/worker/assignments/1", headers=[("X-Debug", plane.token)])
        self.assertEqual(self.names(plane), ["SCAN-SECRET-1"])

    def test_slot_files_and_safe_lines(self):
        self.assertEqual(slot_file_problems("slot-0.json", b'{"phase":"claiming","request_id":"' + b"a" * 32 +
                                            b'","schema":2}'), [])
        self.assertIn("not canonical JSON", slot_file_problems("slot-0.json", b'{"schema": 2, "phase": "claiming",'
                                                                              b' "request_id": "x"}'))
        self.assertTrue(slot_file_problems("slot-0.json", b'{"phase":"assigned","schema":2}')[0].startswith(
            "phase assigned: missing"))
        self.assertEqual(unsafe_lines("worker: started with 2 slots\nworker slot 1: reservation 3 resolved "
                                      "(bundle_accepted)\nworker slot 0: retired (lowered_parallelism_recovery_"
                                      "complete)\n"), [])
        self.assertEqual(unsafe_lines("worker: started with 2 slots\nboom\n"), ["boom"])


class LifeTest(PlaneTest):
    def test_a_life_that_litters_breaks_the_output_and_state_invariants(self):
        plane = self.plane(toy=LITTERER)
        plane.write_slot(1, b"not json, planted")                          # planted bytes are left alone
        life = plane.start()
        plane.wait_ready()
        life.wait(SHORT_TIMEOUT_S)
        self.assertEqual(self.names(plane), ["SCAN-OUTPUT-1", "SCAN-STATE-2, -3"])
        self.assertIn("--token-file", life.proc.argv)
        env = life.proc.env
        self.assertEqual((env["XDG_STATE_HOME"], env["SSL_CERT_FILE"]), (plane.state_home, CA_FILE))
        self.assertTrue(env["HTTPS_PROXY"].endswith(":%d" % plane.tripwire.port))

    def test_a_crash_point_holds_the_claim_the_server_granted_and_a_restart_replays_it(self):
        plane = self.plane(toy=CLAIMER)
        res = plane.add_assignment()
        life = plane.start(kill_at=plane.held("claim", processed=True))
        life.wait(SHORT_TIMEOUT_S)
        self.assertTrue(life.fired)
        self.assertEqual(plane.slot_state(0)["phase"], "claiming")
        request_id = plane.slot_state(0)["request_id"]
        self.assertEqual(plane.server.granted(), {request_id: res.reservation_id})
        second = plane.restart()
        plane.wait_calls("claim", 2)
        second.wait(SHORT_TIMEOUT_S)
        self.assertEqual(second.result.exit_code, 0)
        self.assertEqual([c.replayed for c in plane.server.claims()], [False, True])
        self.assertIn("slot-0.json", life.state_files)
        self.assertEqual(self.names(plane), [])


class NewTokenTest(unittest.TestCase):
    def test_a_generated_token_never_reads_as_an_option(self):
        # One token_urlsafe token in 64 begins with "-": after `--token` as its own word argparse
        # takes it for an option, and a check that passes it so failed one run in a hundred.
        from conformance.planes.scan import ScanPlane
        tokens = [ScanPlane.new_token() for _ in range(3000)]
        self.assertFalse([t for t in tokens if t.startswith("-")])
        self.assertEqual(set(len(t) for t in tokens), {48})
        self.assertEqual(len(ScanPlane.new_token(16)), 16)


# No class of the harness's planes is longer than this (issue 23). A plane or a fake that grows
# past it gives a responsibility a class of its own, as the scan plane's parts do (tokens.py,
# trees.py, targets.py, worker.py; the server's reservations.py, scripts.py, upload.py).
MAX_CLASS_LINES = 450


def long_classes(source, limit=MAX_CLASS_LINES):
    """(name, first line, lines) of every class in source longer than limit lines, its
    decorators included."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if node.end_lineno - first + 1 > limit:
                found.append((node.name, first, node.end_lineno - first + 1))
    return found


class ClassSizeTest(unittest.TestCase):
    def test_no_class_in_the_planes_is_over_the_limit(self):
        root = os.path.join(REPO_ROOT, "conformance", "planes")
        files, over = 0, []
        for folder, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(n for n in names if n.endswith(".py")):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    over += ["%s: class %s (line %d) is %d lines" % ((os.path.relpath(path, REPO_ROOT),) + found)
                             for found in long_classes(handle.read())]
                files += 1
        self.assertGreater(files, 30)  # every plane was read
        self.assertEqual(over, [], "over %d lines: split a responsibility into a class of its own"
                         % MAX_CLASS_LINES)

    def test_the_measure_counts_a_class_from_its_decorators_to_its_last_line(self):
        body = "".join("    x%d = %d\n" % (i, i) for i in range(MAX_CLASS_LINES - 2))
        source = "import functools\n\n\n@functools.total_ordering\nclass Big(object):\n" + body
        self.assertEqual(long_classes(source), [])                         # exactly the limit
        self.assertEqual(long_classes(source + "    last = 1\n"), [("Big", 4, MAX_CLASS_LINES + 1)])
        self.assertEqual(long_classes("class Small(object):\n    pass\n", limit=1), [("Small", 1, 2)])


if __name__ == "__main__":
    unittest.main()
