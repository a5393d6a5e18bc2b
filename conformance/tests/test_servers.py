"""The loopback server base and every fault kind, observed from a raw socket.

A raw socket client (not urllib) is used on purpose: it shows exactly what
went over the wire (byte counts, resets, silence), which is what a fault
promises.
"""

import errno
import hashlib
import http.client
import json
import os
import shutil
import socket
import ssl
import tempfile
import threading
import time
import unittest
from unittest import mock

from conformance import faults, servers
from conformance.faults import Fault, Match
from conformance.servers import (CA_FILE, MISNAMED_CERT_CHAIN, OTHER_CA_FILE, LoopbackServer, MASK,
                                 UNTRUSTED_CERT_CHAIN, json_reply)
from conformance.store import ObjectStore
from conformance.timeouts import SHORT_TIMEOUT_S

# How long a test waits to conclude "nothing arrives": long enough for a
# loopback answer that was going to come, short enough to keep tests fast.
QUIET_WINDOW_S = 0.3
# Upper bound for close() ending held connections; generous for a loaded machine.
CLOSE_BOUND_S = 2.0


class RawClient(object):
    """A blocking socket speaking just enough HTTP/1.1 to observe faults."""

    def __init__(self, port, tls=False, timeout=SHORT_TIMEOUT_S, host="127.0.0.1"):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        if tls:
            ctx = ssl.create_default_context(cafile=CA_FILE)
            self.sock = ctx.wrap_socket(self.sock, server_hostname=host)
        self.buf = b""

    def send_request(self, method, target, headers=(), body=b"", content_length=True):
        lines = ["%s %s HTTP/1.1" % (method, target), "Host: 127.0.0.1"]
        lines += ["%s: %s" % kv for kv in headers]
        if content_length and body is not None and method in ("POST", "PUT"):
            lines.append("Content-Length: %d" % len(body))
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        if body:
            self.sock.sendall(body)

    def read_head(self):
        """(status, reason, {lower name: value}) of the next response."""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed before a response head")
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        _version, code, reason = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        return int(code), reason, headers

    def read_body(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("closed after %d of %d body bytes" % (len(self.buf), n))
            self.buf += chunk
        body, self.buf = self.buf[:n], self.buf[n:]
        return body

    def read_to_eof(self):
        """Everything until EOF; returns (bytes, error or None)."""
        data = bytearray(self.buf)
        self.buf = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return bytes(data), None
                data += chunk
        except OSError as e:
            return bytes(data), e

    def response(self):
        code, reason, headers = self.read_head()
        body = self.read_body(int(headers.get("content-length", "0")))
        return code, reason, headers, body

    def silent_for(self, seconds):
        """True when nothing at all arrives within `seconds`."""
        self.sock.settimeout(seconds)
        try:
            chunk = self.sock.recv(1)
        except socket.timeout:
            return True
        finally:
            self.sock.settimeout(SHORT_TIMEOUT_S)
        if chunk:
            self.buf += chunk
        return False

    def close(self):
        self.sock.close()


def multipart(fields, key, data, boundary="----lspo0123456789abcdef0123456789abcdef",
              after_file=()):
    """A body laid out as the step contract's node sends it: fields, key, file last."""
    parts = []
    for name, value in list(fields.items()) + [("key", key)]:
        parts.append(('--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n'
                      % (boundary, name, value)).encode())
    parts.append(('--%s\r\nContent-Disposition: form-data; name="file"; filename="%s"\r\n'
                  'Content-Type: application/octet-stream\r\n\r\n'
                  % (boundary, key.rsplit("/", 1)[-1])).encode())
    body = b"".join(parts) + data
    for name, value in after_file:
        body += ('\r\n--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s'
                 % (boundary, name, value)).encode()
    body += ("\r\n--%s--\r\n" % boundary).encode()
    return body, "multipart/form-data; boundary=" + boundary


def pattern_bytes(n):
    block = hashlib.sha256(b"payload").digest() * 2048
    return (block * (n // len(block) + 1))[:n]


def threads_named(prefix):
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


class StoreFaultCase(unittest.TestCase):
    """A fresh store per test, closed (and checked for leftovers) after it."""

    tls = False

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="store-test-")
        self.store = ObjectStore(self.root, tls=self.tls, name="flt")
        self.token = self.store.new_token()
        self.data = pattern_bytes(200000)
        self.store.put("in/a.bin", self.data)
        self.url = self.store.presign_get("in/a.bin", self.token)
        self.target = self.url.split("127.0.0.1:%d" % self.store.server.port, 1)[1]
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            c.close()
        self.store.close()
        shutil.rmtree(self.root, ignore_errors=True)
        self.assertEqual(self.store.errors, [])
        self.assertEqual(threads_named("flt-"), [])

    def client(self, timeout=SHORT_TIMEOUT_S):
        c = RawClient(self.store.server.port, tls=self.tls, timeout=timeout)
        self.clients.append(c)
        return c

    def done(self, seq=1):
        """The transcript record of exchange `seq` once the store has ended it."""
        ev = self.store.wait_for(lambda e: e.kind == "done" and e.seq == seq, SHORT_TIMEOUT_S)
        self.assertIsNotNone(ev, "exchange %d never ended" % seq)
        return self.store.transcript[seq - 1]

    def get(self, client=None):
        c = client or self.client()
        c.send_request("GET", self.target)
        return c

    def upload_body(self, key="out/run/x.bin", data=b"upload-bytes" * 1000):
        post = self.store.presign_post("out/run/", self.token)
        return multipart(post["fields"], key, data)


class FaultKindsTest(StoreFaultCase):

    def test_status_with_s3_code_and_retry_after(self):
        self.store.add_fault(faults.status(503, s3_code="SlowDown", retry_after_s=2), Match(method="GET"))
        code, reason, headers, body = self.get().response()
        self.assertEqual((code, reason), (503, "Service Unavailable"))
        self.assertEqual(headers["retry-after"], "2")
        self.assertIn(b"<Code>SlowDown</Code>", body)
        self.assertTrue(body.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<Error>'))
        self.assertEqual(self.store.transcript[-1].error_code, "SlowDown")

    def test_status_reason_and_raw_body(self):
        self.store.add_fault(faults.status(401, reason="Nope", body=b""), Match(first=1))
        code, reason, _headers, body = self.get().response()
        self.assertEqual((code, reason, body), (401, "Nope", b""))
        code, _r, _h, body = self.get().response()   # first=1: the next one is served
        self.assertEqual((code, body), (200, self.data))

    def test_delay_before_headers(self):
        self.store.add_fault(faults.delay(0.4))
        t0 = time.monotonic()
        code, _r, _h, body = self.get().response()
        self.assertGreaterEqual(time.monotonic() - t0, 0.4)
        self.assertEqual((code, body), (200, self.data))

    def test_hang_never_answers_until_close(self):
        rule = self.store.add_fault(faults.hang())
        c = self.get()
        self.assertTrue(c.silent_for(QUIET_WINDOW_S))
        self.assertEqual(rule.applied, 1)
        t0 = time.monotonic()
        self.store.close()
        self.assertLess(time.monotonic() - t0, CLOSE_BOUND_S)
        data, _err = c.read_to_eof()
        self.assertEqual(data, b"")
        ex = self.store.transcript[0]
        self.assertEqual((ex.outcome, ex.status, ex.t_headers_sent), ("held", None, None))

    def test_hang_release_with_answer(self):
        rule = self.store.add_fault(faults.hang())
        c = self.get()
        self.assertTrue(c.silent_for(QUIET_WINDOW_S))
        rule.release(answer=True)
        code, _r, _h, body = c.response()
        self.assertEqual((code, body), (200, self.data))

    def test_stall_stops_at_exactly_n_bytes(self):
        self.store.add_fault(faults.stall(after_bytes=65536))
        c = self.get()
        code, _r, headers, = c.read_head()
        self.assertEqual(int(headers["content-length"]), len(self.data))
        body = c.read_body(65536)
        self.assertEqual(body, self.data[:65536])
        self.assertTrue(c.silent_for(QUIET_WINDOW_S))
        self.assertEqual(c.buf, b"")
        self.assertTrue(self.store.wait_for(lambda e: e.kind == "fault", SHORT_TIMEOUT_S))

    def test_stall_release_resumes_body(self):
        rule = self.store.add_fault(faults.stall(after_bytes=1000))
        c = self.get()
        c.read_head()
        self.assertEqual(c.read_body(1000), self.data[:1000])
        self.assertTrue(c.silent_for(QUIET_WINDOW_S))
        rule.release(answer=True)
        self.assertEqual(c.read_body(len(self.data) - 1000), self.data[1000:])

    def test_reset_after_n_response_bytes(self):
        self.store.add_fault(faults.reset(after_bytes=65536), Match(method="GET"))
        c = self.get()
        c.read_head()
        data, err = c.read_to_eof()
        self.assertEqual(len(data), 65536)
        self.assertIsInstance(err, ConnectionResetError)
        self.assertEqual(err.errno, errno.ECONNRESET)
        ex = self.done()
        self.assertEqual((ex.outcome, ex.resp_bytes), ("reset", 65536))

    def test_reset_after_n_request_bytes_on_upload(self):
        self.store.add_fault(faults.reset(after_bytes=65536), Match(method="POST"))
        body, ctype = self.upload_body(data=pattern_bytes(4 << 20))
        c = self.client()
        err = None
        try:
            c.send_request("POST", "/upload", [("Content-Type", ctype)], body)
            c.read_head()
        except OSError as e:
            err = e
        self.assertIsInstance(err, (ConnectionResetError, BrokenPipeError))
        ex = self.done()
        self.assertEqual((ex.outcome, ex.req_bytes), ("reset", 65536))
        self.assertNotIn("out/run/x.bin", self.store.objects())
        self.assertEqual(os.listdir(os.path.join(self.root, "tmp")), [])

    def test_reset_exact_for_a_slow_reader(self):
        # The RST waits for queued bytes to leave, so a reader that starts
        # late still gets exactly N bytes before ECONNRESET.
        self.store.serve_generated("in/big", 16 << 20, seed=1)
        n = (8 << 20) + 3
        self.store.add_fault(faults.reset(after_bytes=n))
        c = self.client()
        url = self.store.presign_get("in/big", self.token)
        c.send_request("GET", url.split(str(self.store.server.port), 1)[1])
        c.read_head()
        time.sleep(QUIET_WINDOW_S)
        data, err = c.read_to_eof()
        self.assertEqual(len(data), n)
        self.assertIsInstance(err, ConnectionResetError)

    def test_truncate_closes_cleanly_short(self):
        self.store.add_fault(faults.truncate(after_bytes=5000))
        c = self.get()
        _code, _r, headers = c.read_head()
        data, err = c.read_to_eof()
        self.assertIsNone(err)
        self.assertEqual(data, self.data[:5000])
        self.assertEqual(int(headers["content-length"]), len(self.data))
        self.assertEqual(self.done().outcome, "truncated")

    def test_redirect_gives_location(self):
        self.store.add_fault(faults.redirect("http://127.0.0.1:9/elsewhere?x=1", code=307))
        code, _r, headers, body = self.get().response()
        self.assertEqual((code, headers["location"], body), (307, "http://127.0.0.1:9/elsewhere?x=1", b""))

    def test_redirect_on_upload_commits_nothing(self):
        self.store.add_fault(faults.redirect("/elsewhere"), Match(method="POST"))
        body, ctype = self.upload_body()
        c = self.client()
        c.send_request("POST", "/upload", [("Content-Type", ctype)], body)
        code, _r, headers, _b = c.response()
        self.assertEqual((code, headers["location"]), (302, "/elsewhere"))
        self.assertEqual([o.key for o in self.store.commit_log()], ["in/a.bin"])

    def test_oversize_honest_and_absent_length(self):
        self.store.add_fault(faults.oversize(extra_bytes=3000), Match(first=1))
        self.store.add_fault(faults.oversize(extra_bytes=3000, content_length="absent"), Match(first=1))
        c = self.get()
        _code, _r, headers = c.read_head()
        self.assertEqual(int(headers["content-length"]), len(self.data) + 3000)
        body = c.read_body(len(self.data) + 3000)
        self.assertEqual(body[:len(self.data)], self.data)
        c = self.get()
        _code, _r, headers = c.read_head()
        self.assertNotIn("content-length", headers)
        data, err = c.read_to_eof()
        self.assertIsNone(err)
        self.assertEqual(len(data), len(self.data) + 3000)

    def test_garbage_body(self):
        self.store.add_fault(faults.garbage(b"<html>not your object</html>"))
        code, _r, _h, body = self.get().response()
        self.assertEqual((code, body), (200, b"<html>not your object</html>"))

    def test_dribble_timing(self):
        # Status line, headers and body arrive in 40-byte pieces, 0.02 s apart.
        self.store.put("in/a.bin", self.data[:100])
        self.store.add_fault(faults.dribble(chunk_bytes=40, interval_s=0.02))
        c = self.get()
        t0 = time.monotonic()
        pieces = []
        while True:
            piece = c.sock.recv(65536)
            if not piece:
                break
            pieces.append(piece)
            c.buf = b"".join(pieces)
            if b"\r\n\r\n" in c.buf and c.buf.endswith(self.data[:100][-10:]):
                break
        elapsed = time.monotonic() - t0
        code, _r, _h, body = c.response()
        self.assertEqual((code, body), (200, self.data[:100]))
        total = sum(map(len, pieces))
        # Pieces may merge when this reader is slow; the spacing cannot shrink.
        self.assertGreater(len(pieces), 1)
        self.assertGreaterEqual(elapsed, 0.02 * ((total + 39) // 40 - 1) * 0.9)
        ex = self.done()
        self.assertLessEqual(ex.t_start, ex.t_headers_sent)
        self.assertEqual(ex.fault, "dribble 40 bytes every 0.02 s")

    def test_accept_then_hang_commits_and_never_answers(self):
        self.store.add_fault(faults.accept_then_hang(), Match(method="POST", key="*/x.bin"))
        body, ctype = self.upload_body()
        c = self.client()
        c.send_request("POST", "/upload", [("Content-Type", ctype)], body)
        self.assertTrue(self.store.wait_for(lambda e: e.kind == "commit" and e.key == "out/run/x.bin",
                                            SHORT_TIMEOUT_S))
        self.assertTrue(c.silent_for(QUIET_WINDOW_S))
        obj = self.store.objects()["out/run/x.bin"]
        self.assertIsNone(obj.t_response_sent)
        self.assertLessEqual(obj.t_request, obj.t_body_done)
        self.assertLessEqual(obj.t_body_done, obj.committed_at)
        t0 = time.monotonic()
        self.store.close()
        self.assertLess(time.monotonic() - t0, CLOSE_BOUND_S)
        self.assertEqual(c.read_to_eof()[0], b"")

    def test_accept_then_reset(self):
        self.store.add_fault(faults.accept_then_reset(), Match(method="POST"))
        body, ctype = self.upload_body()
        c = self.client()
        c.send_request("POST", "/upload", [("Content-Type", ctype)], body)
        _data, err = c.read_to_eof()
        self.assertIsInstance(err, ConnectionResetError)
        self.assertIn("out/run/x.bin", self.store.objects())
        self.assertEqual(self.done().outcome, "reset")

    def test_request_phase_status_answers_before_body(self):
        self.store.add_fault(faults.status(400, s3_code="RequestTimeout"),
                             Match(method="POST", phase="request"))
        body, ctype = self.upload_body(data=pattern_bytes(1 << 20))
        c = self.client()
        head = ("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
                % (ctype, len(body))).encode()
        c.sock.sendall(head)
        code, _r, headers, xml = c.response()       # answered with no body byte sent
        self.assertEqual((code, headers.get("connection")), (400, "close"))
        self.assertIn(b"<Code>RequestTimeout</Code>", xml)
        c.sock.sendall(body)                          # the store drains what follows
        self.assertEqual(c.read_to_eof(), (b"", None))
        self.assertEqual([o.key for o in self.store.commit_log()], ["in/a.bin"])

    def test_request_phase_stall_on_upload(self):
        self.store.add_fault(faults.stall(after_bytes=100000), Match(method="POST"))
        body, ctype = self.upload_body(data=pattern_bytes(300000))
        c = self.client()
        c.send_request("POST", "/upload", [("Content-Type", ctype)], body)
        self.assertTrue(c.silent_for(QUIET_WINDOW_S))
        self.store.close()
        ex = self.store.transcript[0]
        self.assertEqual((ex.outcome, ex.req_bytes), ("stalled", 100000))
        self.assertNotIn("out/run/x.bin", self.store.objects())

    def test_key_glob_matches_upload_key(self):
        self.store.add_fault(faults.status(503, s3_code="SlowDown"), Match(method="POST", key="*/marker.json"))
        for key, expected in (("out/run/x.bin", 204), ("out/run/marker.json", 503)):
            body, ctype = self.upload_body(key=key)
            c = self.client()
            c.send_request("POST", "/upload", [("Content-Type", ctype)], body)
            self.assertEqual(c.response()[0], expected, key)
        self.assertEqual(sorted(self.store.objects()), ["in/a.bin", "out/run/x.bin"])

    def test_first_skip_and_seeded_probability(self):
        rule = self.store.add_fault(faults.status(500), Match(method="GET", skip=1, first=2))
        codes = [self.get().response()[0] for _ in range(5)]
        self.assertEqual(codes, [200, 500, 500, 200, 200])
        self.assertEqual((rule.seen, rule.applied), (5, 2))
        rule.remove()

        def schedule(seed):
            r = faults.FaultRule(faults.status(500), Match(probability=0.5), 0, seed)
            return [r.consider("GET", "k") for _ in range(40)]
        self.assertEqual(schedule(7), schedule(7))
        self.assertNotEqual(schedule(7), schedule(8))
        self.assertTrue(5 < sum(schedule(7)) < 35)


class TlsStallTest(StoreFaultCase):
    tls = True

    def test_tls_stall_first_connection_only(self):
        self.store.add_fault(faults.tls_stall(), Match(first=1))
        raw = socket.create_connection(("127.0.0.1", self.store.server.port), timeout=QUIET_WINDOW_S)
        ctx = ssl.create_default_context(cafile=CA_FILE)
        with self.assertRaises(socket.timeout):
            ctx.wrap_socket(raw, server_hostname="127.0.0.1")
        raw.close()
        code, _r, _h, body = self.get().response()     # second connection: normal HTTPS
        self.assertEqual((code, body), (200, self.data))
        records = self.store.connections
        self.assertEqual(records[0].fault, "tls stall (TCP accepted, handshake never completed)")
        self.assertIsNone(records[0].t_tls_done)
        self.assertIsNotNone(records[1].t_tls_done)


class ServerBaseTest(unittest.TestCase):

    def setUp(self):
        self.srv = LoopbackServer("base", secret_values=lambda: ["s3cr3t-value"])
        self.addCleanup(self._close)

    def _close(self):
        self.srv.close()
        self.assertEqual(self.srv.errors, [])
        self.assertEqual(threads_named("base-"), [])

    def test_routes_json_keepalive_and_404(self):
        self.srv.route("POST", "/v1/echo", lambda req: json_reply({"got": json.loads(req.body)}))
        self.srv.serve_json("/manifest.json", {"schema_version": 1})
        conn = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=SHORT_TIMEOUT_S)
        conn.request("GET", "/manifest.json")
        r = conn.getresponse()
        self.assertEqual((r.status, json.loads(r.read())), (200, {"schema_version": 1}))
        conn.request("POST", "/v1/echo", body=b'{"a": 1}', headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        self.assertEqual(json.loads(r.read()), {"got": {"a": 1}})
        conn.request("GET", "/nothing")
        r = conn.getresponse()
        r.read()
        self.assertEqual(r.status, 404)
        conn.close()
        ids = set(ex.conn_id for ex in self.srv.transcript)
        self.assertEqual(len(ids), 1)          # one keep-alive connection
        self.assertEqual([ex.seq for ex in self.srv.transcript], [1, 2, 3])

    def test_chunked_request_body_is_decoded(self):
        self.srv.route("POST", "/v1/echo", lambda req: json_reply({"n": len(req.body)}))
        c = RawClient(self.srv.port)
        c.sock.sendall(b"POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                       b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n")
        code, _r, _h, body = c.response()
        self.assertEqual((code, json.loads(body)), (200, {"n": 11}))
        c.close()

    def test_a_chunked_answer_has_no_content_length_and_reads_as_its_body(self):
        data = bytes(range(256)) * 41   # 10,496 bytes: chunks of 4096, 4096, 2304
        self.srv.route("GET", "/chunked", lambda ctx: ctx.respond(200, [("Content-Type", "text/csv")], body=data,
                                                                  chunk_bytes=4096), raw=True)
        self.srv.serve_bytes("/plain", b"after")
        c = RawClient(self.srv.port)
        c.sock.sendall(b"GET /chunked HTTP/1.1\r\nHost: x\r\n\r\n")
        raw = b""
        while not raw.endswith(b"\r\n0\r\n\r\n"):
            piece = c.sock.recv(65536)
            self.assertTrue(piece, "the connection closed before the last chunk")
            raw += piece
        head, _sep, body = raw.partition(b"\r\n\r\n")
        names = [line.split(b":")[0].lower() for line in head.split(b"\r\n")[1:]]
        self.assertIn(b"transfer-encoding", names)
        self.assertNotIn(b"content-length", names)
        self.assertTrue(body.startswith(b"1000\r\n") and b"\r\n900\r\n" in body)
        c.close()
        conn = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=SHORT_TIMEOUT_S)
        conn.request("GET", "/chunked")
        r = conn.getresponse()
        self.assertEqual((r.length, r.read()), (None, data))
        conn.request("GET", "/plain")   # the same connection: a chunked answer ends where its last chunk does
        self.assertEqual(conn.getresponse().read(), b"after")
        conn.close()

    def test_transcript_masks_secrets_and_queries(self):
        self.srv.serve_bytes("/doc", b"x")
        c = RawClient(self.srv.port)
        c.send_request("GET", "/doc?sig=abc", [("Authorization", "Bearer tok"),
                                              ("X-Note", "has s3cr3t-value inside"),
                                              ("Referer", "http://h/p?token=zzz")])
        self.assertEqual(c.response()[0], 200)
        c.close()
        ex = self.srv.transcript[0]
        self.assertEqual(ex.path, "/doc?" + MASK)
        headers = dict(ex.headers)
        self.assertEqual(headers["Authorization"], MASK)
        self.assertEqual(headers["X-Note"], "has %s inside" % MASK)
        self.assertEqual(headers["Referer"], "http://h/p?" + MASK)
        self.assertNotIn("s3cr3t-value", repr(self.srv.transcript) + repr(self.srv.events))

    def test_faults_apply_to_simple_routes_and_max_concurrency(self):
        self.srv.serve_json("/m.json", {"x": 1})
        rule = self.srv.add_fault(faults.hang(), Match(key="/m.json", first=2))
        clients = [RawClient(self.srv.port) for _ in range(2)]
        for c in clients:
            c.send_request("GET", "/m.json")
        self.assertTrue(self.srv.wait_until(lambda: rule.applied == 2, SHORT_TIMEOUT_S))
        self.assertEqual(self.srv.max_concurrency, 2)
        c3 = RawClient(self.srv.port)
        c3.send_request("GET", "/m.json")
        self.assertEqual(json.loads(c3.response()[3]), {"x": 1})
        t0 = time.monotonic()
        self.srv.close()
        self.assertLess(time.monotonic() - t0, CLOSE_BOUND_S)
        for c in clients + [c3]:
            c.close()

    def test_serial_client_never_counted_twice_in_flight(self):
        # The server thread is held just after each send: a serial client's
        # next request then arrives before that thread's bookkeeping, which
        # is exactly what a loaded machine does now and then.
        self.srv.serve_bytes("/doc", b"x" * 100)
        original = servers._Conn.send

        def send_then_lag(conn, data):
            original(conn, data)
            time.sleep(0.1)

        with mock.patch.object(servers._Conn, "send", send_then_lag):
            for _ in range(3):
                c = RawClient(self.srv.port)
                c.send_request("GET", "/doc", [("Connection", "close")])
                self.assertEqual(c.response()[0], 200)
                c.close()
        self.assertEqual(self.srv.max_concurrency, 1)

    def test_close_ends_idle_keepalive_and_blocked_upload(self):
        self.srv.route("POST", "/slow", lambda req: json_reply({}))
        idle = RawClient(self.srv.port)
        idle.send_request("POST", "/slow", body=b"")
        idle.response()                                  # now idle on keep-alive
        stuck = RawClient(self.srv.port)                 # a body that never comes
        stuck.sock.sendall(b"POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc")
        self.assertTrue(self.srv.wait_for(lambda e: e.kind == "request" and e.seq == 2, SHORT_TIMEOUT_S))
        t0 = time.monotonic()
        self.srv.close()
        self.assertLess(time.monotonic() - t0, CLOSE_BOUND_S)
        self.assertEqual(threads_named("base-"), [])
        idle.close()
        stuck.close()

    def test_https_with_test_ca(self):
        srv = LoopbackServer("tlsbase", tls=True)
        try:
            srv.serve_bytes("/x", b"secure")
            self.assertTrue(srv.origin.startswith("https://127.0.0.1:"))
            ctx = ssl.create_default_context(cafile=CA_FILE)
            for host in ("127.0.0.1", "localhost"):
                conn = http.client.HTTPSConnection(host, srv.port, context=ctx, timeout=SHORT_TIMEOUT_S)
                conn.request("GET", "/x")
                self.assertEqual(conn.getresponse().read(), b"secure")
                conn.close()
        finally:
            srv.close()
        self.assertEqual(threads_named("tlsbase-"), [])

    def test_bad_request_line(self):
        c = RawClient(self.srv.port)
        c.sock.sendall(b"NONSENSE\r\n\r\n")
        self.assertEqual(c.response()[0], 400)
        c.close()


class FaultVocabularyTest(unittest.TestCase):

    def test_describe_texts(self):
        cases = [
            (faults.reset(65536), "reset after 65536 body bytes"),
            (faults.stall(10), "stall after 10 body bytes"),
            (faults.truncate(7), "truncate after 7 body bytes"),
            (faults.status(503, s3_code="SlowDown", retry_after_s=2), "status 503 SlowDown, Retry-After 2 s"),
            (faults.status(401), "status 401 (no body)"),
            (faults.delay(3), "delay 3 s before response headers"),
            (faults.dribble(1, 5), "dribble 1 byte every 5 s"),
            (faults.redirect("http://h/p?sig=1"), "redirect 302 to http://h/p?" + MASK),
            (faults.oversize(10), "oversize by 10 bytes (Content-Length honest)"),
            (faults.garbage(b"abc"), "garbage 200 body (3 bytes)"),
            (faults.hang(), "hang (request accepted, never answered)"),
        ]
        for fault, text in cases:
            self.assertEqual(fault.describe(), text)
        self.assertEqual(faults.reset(65536).describe("request"), "reset after 65536 request body bytes")
        self.assertEqual(Fault("reset", after_bytes=5), faults.reset(5))

    def test_bad_params_refused(self):
        with self.assertRaises(ValueError):
            Fault("explode")
        with self.assertRaises(TypeError):
            Fault("reset")
        with self.assertRaises(ValueError):
            faults.reset(-1)
        with self.assertRaises(ValueError):
            faults.oversize(1, content_length="lying")
        with self.assertRaises(ValueError):
            faults.FaultRule(faults.dribble(1, 1), Match(phase="request"), 0, 0)

    def test_default_phases(self):
        self.assertEqual(faults.reset(1).default_phase("POST"), "request")
        self.assertEqual(faults.reset(1).default_phase("GET"), "response")
        self.assertEqual(faults.hang().default_phase("POST"), "request")
        self.assertEqual(faults.delay(1).default_phase("POST"), "response")


class BlackholeTest(unittest.TestCase):

    def test_connect_hangs(self):
        with faults.blackhole() as hole:
            host, port = hole
            self.assertEqual(hole, ("127.0.0.1", port))
            s = socket.socket()
            s.settimeout(QUIET_WINDOW_S)
            t0 = time.monotonic()
            with self.assertRaises(socket.timeout):
                s.connect((host, port))
            self.assertGreaterEqual(time.monotonic() - t0, QUIET_WINDOW_S * 0.9)
            s.close()
            self.assertTrue(hole.url().startswith("http://127.0.0.1:"))


if __name__ == "__main__":
    unittest.main()


class UntrustedCertificateTest(unittest.TestCase):
    """cert_chain=UNTRUSTED_CERT_CHAIN serves a certificate a client trusting the test CA refuses."""

    def _connect(self, server, host):
        context = ssl.create_default_context(cafile=CA_FILE)
        conn = http.client.HTTPSConnection(host, server.port, context=context, timeout=SHORT_TIMEOUT_S)
        try:
            conn.request("GET", "/ok")
            return conn.getresponse().status
        finally:
            conn.close()

    def test_the_test_ca_certificate_verifies(self):
        server = LoopbackServer("trusted", tls=True)
        self.addCleanup(server.close)
        server.route("GET", "/ok", lambda req: json_reply({"ok": True}))
        self.assertEqual(self._connect(server, "localhost"), 200)

    def test_the_untrusted_certificate_is_refused(self):
        server = LoopbackServer("untrusted", tls=True, cert_chain=UNTRUSTED_CERT_CHAIN)
        self.addCleanup(server.close)
        server.route("GET", "/ok", lambda req: json_reply({"ok": True}))
        with self.assertRaises(ssl.SSLCertVerificationError):
            self._connect(server, "localhost")
        self.assertEqual(server.transcript, [])

    def test_the_misnamed_certificate_fails_only_on_its_name(self):
        # Its chain verifies against OTHER_CA_FILE; only the host name can
        # refuse it, which is what makes the crawler's *.tls-hostname checks fail
        # for a node that turns check_hostname off.
        server = LoopbackServer("misnamed", tls=True, cert_chain=MISNAMED_CERT_CHAIN)
        self.addCleanup(server.close)
        server.route("GET", "/ok", lambda req: json_reply({"ok": True}))
        for check_hostname in (True, False):
            context = ssl.create_default_context(cafile=OTHER_CA_FILE)
            context.check_hostname = check_hostname
            conn = http.client.HTTPSConnection("localhost", server.port, context=context,
                                               timeout=SHORT_TIMEOUT_S)
            try:
                if check_hostname:
                    with self.assertRaisesRegex(ssl.SSLCertVerificationError, "[Hh]ostname mismatch"):
                        conn.request("GET", "/ok")
                else:
                    conn.request("GET", "/ok")
                    self.assertEqual(conn.getresponse().status, 200)
            finally:
                conn.close()
        self.assertEqual(len(server.transcript), 1)
