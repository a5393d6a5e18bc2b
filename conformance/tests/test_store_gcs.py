"""The object store's GCS-style V4 signed PUT: URL shape, every refusal, the commit.

Requests are sent the way the crawler's node sends them: the request line
``PUT <path>?<raw query>`` exactly as the URL gave it, then Host,
Content-Length and the signed headers in order (http.client with
putrequest/putheader, or raw bytes where a test needs to stop half-way).
"""

import base64
import hashlib
import http.client
import os
import shutil
import socket
import ssl
import tempfile
import threading
import unittest
import urllib.parse

from conformance import faults
from conformance.faults import Match
from conformance.servers import CA_FILE, MASK
from conformance.store import GCS_QUERY_PARAMS, GCS_SIGNER_EMAIL, ObjectStore, gcs_error_xml
from conformance.tests.test_servers import threads_named
from conformance.timeouts import SHORT_TIMEOUT_S

BUCKET = "crawl-bucket"
OBJECT = "runs/7/part-0003.ndjson"
KEY = BUCKET + "/" + OBJECT
# The size range the crawler's URLs allow; tests go just outside it.
MAX_BYTES = 1 << 20
BODY = b'{"url": "https://example.org/", "status": 200}\n' * 200


def crawler_headers(body, length_range="0,%d" % MAX_BYTES, generation="0"):
    """The crawler's required headers, in the order it sends them."""
    return [("Content-Type", "application/x-ndjson"),
            ("x-goog-content-length-range", length_range),
            ("x-goog-content-sha256", hashlib.sha256(body).hexdigest()),
            ("x-goog-if-generation-match", generation),
            ("x-goog-meta-crawl-id", "run-7"),
            ("x-goog-meta-shard", "3"),
            ("x-goog-meta-producer", "crawler")]


def xml_field(body, name):
    text = body.decode()
    return text.split("<%s>" % name, 1)[1].split("</%s>" % name, 1)[0]


def raw_head(url, headers, content_length=None, extra=()):
    """The request head as the node writes it: Host, Content-Length, signed headers."""
    parts = urllib.parse.urlsplit(url)
    lines = ["PUT %s?%s HTTP/1.1" % (parts.path, parts.query), "Host: " + parts.netloc]
    if content_length is not None:
        lines.append("Content-Length: %d" % content_length)
    lines += ["%s: %s" % kv for kv in list(headers) + list(extra)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class RawPut(object):
    """A socket that writes a PUT in pieces and reads one response."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=SHORT_TIMEOUT_S)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def response(self):
        """(status, {lower name: value}, body)."""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("connection closed before a response head")
            self.buf += chunk
        head, rest = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = dict((k.strip().lower(), v.strip()) for k, _, v in
                       (line.partition(":") for line in lines[1:]))
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            rest += chunk
        return int(lines[0].split(" ")[1]), headers, rest[:length]

    def close(self):
        self.sock.close()


class GcsPutCase(unittest.TestCase):
    tls = False

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="store-gcs-test-")
        self.store = ObjectStore(self.root, tls=self.tls, name="gcs")

    def tearDown(self):
        self.store.close()
        self.assertEqual(self.store.errors, [])
        self.assertEqual(threads_named("gcs-"), [])
        shutil.rmtree(self.root, ignore_errors=True)

    def sign(self, body=BODY, headers=None, **kw):
        headers = crawler_headers(body) if headers is None else headers
        return self.store.sign_put(BUCKET, OBJECT, headers, **kw), headers

    def put(self, url, body, headers, host=None):
        """(status, headers, body) of one PUT sent as the node sends it."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme == "https":
            conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=SHORT_TIMEOUT_S,
                                               context=ssl.create_default_context(cafile=CA_FILE))
        else:
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=SHORT_TIMEOUT_S)
        try:
            conn.putrequest("PUT", parts.path + "?" + parts.query, skip_host=True,
                            skip_accept_encoding=True)
            conn.putheader("Host", host or parts.netloc)
            conn.putheader("Content-Length", str(len(body)))
            for name, value in headers:
                conn.putheader(name, value)
            conn.endheaders(body)
            r = conn.getresponse()
            return r.status, r.headers, r.read()
        finally:
            conn.close()

    def last_put(self):
        return [ex for ex in self.store.transcript if ex.method == "PUT"][-1]

    def wait_done(self, count=1):
        """Wait until `count` exchanges have ended (their notes and outcome are final)."""
        self.assertTrue(self.store.wait_until(
            lambda: sum(1 for ex in self.store.transcript if ex.outcome) >= count, SHORT_TIMEOUT_S))

    def assertRefused(self, result, status, code):
        got_status, headers, body = result
        self.assertEqual((got_status, xml_field(body, "Code")), (status, code), body)
        self.assertTrue(body.startswith(b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>"), body)
        self.assertEqual(headers["Content-Type"], "application/xml; charset=UTF-8")
        self.assertEqual(headers["Server"], "UploadServer")
        self.assertTrue(headers["X-GUploader-UploadID"])
        self.assertNothingStored()

    def assertNothingStored(self):
        self.assertEqual(self.store.objects(), {})
        self.assertEqual(os.listdir(os.path.join(self.root, "tmp")), [])
        self.assertEqual(os.listdir(os.path.join(self.root, "objects")), [])


class SignPutTest(GcsPutCase):

    def test_url_shape(self):
        url, _headers = self.sign()
        parts = urllib.parse.urlsplit(url)
        self.assertEqual(parts.scheme + "://" + parts.netloc, self.store.origin)
        self.assertEqual(parts.path, "/crawl-bucket/runs/7/part-0003.ndjson")
        pairs = [p.split("=", 1) for p in parts.query.split("&")]
        self.assertEqual([k for k, _ in pairs], list(GCS_QUERY_PARAMS))
        q = dict(pairs)
        self.assertEqual(q["X-Goog-Algorithm"], "GOOG4-RSA-SHA256")
        date = q["X-Goog-Date"]
        self.assertRegex(date, r"^\d{8}T\d{6}Z\Z")
        self.assertEqual(q["X-Goog-Credential"], "%s%%2F%s%%2Fauto%%2Fstorage%%2Fgoog4_request"
                         % (GCS_SIGNER_EMAIL.replace("@", "%40"), date[:8]))
        self.assertEqual(q["X-Goog-Expires"], "900")
        self.assertEqual(q["X-Goog-SignedHeaders"], "%3B".join([
            "content-type", "host", "x-goog-content-length-range", "x-goog-content-sha256",
            "x-goog-if-generation-match", "x-goog-meta-crawl-id", "x-goog-meta-producer",
            "x-goog-meta-shard"]))
        self.assertRegex(q["X-Goog-Signature"], r"^[0-9a-f]{128}\Z")
        self.assertIn(q["X-Goog-Signature"], self.store.secrets())

    def test_bad_arguments(self):
        for bad in (dict(expires_in_s=7 * 24 * 3600 + 1), dict(expires_in_s=0)):
            with self.assertRaises(ValueError):
                self.store.sign_put(BUCKET, OBJECT, [], **bad)
        for headers in ([("Host", "x")], [("X-A", "1"), ("x-a", "2")], [("X-A", "a\r\nb")]):
            with self.assertRaises(ValueError):
                self.store.sign_put(BUCKET, OBJECT, headers)
        with self.assertRaises(ValueError):
            self.store.sign_put("a/b", OBJECT, [])

    def test_error_document(self):
        doc = gcs_error_xml("MalformedSecurityHeader", details="a < b", parameter="x-goog-date")
        self.assertEqual(doc, (b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>MalformedSecurityHeader"
                               b"</Code><Message>Your request has a malformed header.</Message><ParameterName>"
                               b"x-goog-date</ParameterName><Details>a &lt; b</Details></Error>"))


class GoodPutTest(GcsPutCase):

    def test_good_put_commits(self):
        url, headers = self.sign()
        status, rh, body = self.put(url, BODY, headers)
        self.assertEqual((status, body), (200, b""), body)
        obj = self.store.objects()[KEY]
        md5 = hashlib.md5(BODY).digest()
        self.assertEqual((obj.sha256, obj.size, obj.origin, obj.generation),
                         (hashlib.sha256(BODY).hexdigest(), len(BODY), "gcs-put", 1))
        self.assertEqual(obj.content_type, "application/x-ndjson")
        self.assertEqual(obj.metadata, {"crawl-id": "run-7", "shard": "3", "producer": "crawler"})
        with self.store.open_object(KEY) as f:
            self.assertEqual(f.read(), BODY)
        self.assertEqual(rh["ETag"], '"%s"' % md5.hex())
        self.assertEqual((rh["x-goog-generation"], rh["x-goog-metageneration"]), ("1", "1"))
        self.assertEqual(rh["x-goog-hash"], "md5=" + base64.b64encode(md5).decode())
        self.assertEqual(rh["x-goog-stored-content-length"], str(len(BODY)))
        self.assertEqual(rh["x-goog-stored-content-encoding"], "identity")
        self.assertEqual(rh["Server"], "UploadServer")
        self.assertTrue(rh["X-GUploader-UploadID"])
        self.wait_done()
        ex = self.last_put()
        self.assertEqual((ex.key, ex.status, ex.outcome), (KEY, 200, "ok"))
        for name, value in (("signed", True), ("put_key", KEY), ("declared_length", len(BODY)),
                            ("signature_known", True), ("signed_url_seq", 1), ("header_mismatch", []),
                            ("precondition", 0), ("generation", 1)):
            self.assertEqual(ex.notes[name], value, name)
        self.assertTrue(obj.t_request <= obj.t_body_done <= obj.committed_at <= obj.t_response_sent)
        self.assertEqual(os.listdir(os.path.join(self.root, "tmp")), [])

    def test_second_put_is_412_and_first_unchanged(self):
        url, headers = self.sign()
        self.assertEqual(self.put(url, BODY, headers)[0], 200)
        first = self.store.objects()[KEY]
        status, rh, body = self.put(url, BODY, headers)        # the same URL again
        self.assertEqual((status, xml_field(body, "Code")), (412, "PreconditionFailed"))
        other = b"another body\n"
        url2, headers2 = self.sign(other)                       # a different body, own URL
        status, _rh, body = self.put(url2, other, headers2)
        self.assertEqual((status, xml_field(body, "Code")), (412, "PreconditionFailed"))
        self.assertIs(self.store.objects()[KEY], first)
        self.assertEqual(self.store.read_hash(KEY), (hashlib.sha256(BODY).hexdigest(), len(BODY)))
        self.assertEqual([o.origin for o in self.store.commit_log()], ["gcs-put"])
        self.assertEqual(len(os.listdir(os.path.join(self.root, "objects"))), 1)
        self.assertEqual(os.listdir(os.path.join(self.root, "tmp")), [])

    def test_generation_match_n(self):
        url, headers = self.sign()
        self.assertEqual(self.put(url, BODY, headers)[0], 200)
        second = b"second\n"
        url2, headers2 = self.sign(second, crawler_headers(second, generation="1"))
        status, rh, _body = self.put(url2, second, headers2)
        self.assertEqual((status, rh["x-goog-generation"]), (200, "2"))
        self.assertEqual(self.store.objects()[KEY].generation, 2)
        self.assertEqual(self.put(url2, second, headers2)[0], 412)   # generation is 2 now

    def test_contract_shaped_put(self):
        # The crawler contract's seven headers: the payload is not hashed
        # (UNSIGNED-PAYLOAD), the object name is a 64-hex quarantine path.
        name = "crawler-quarantine/v2/" + hashlib.sha256(b"request").hexdigest()
        headers = [("Content-Type", "application/vnd.mostlyright.crawler-result+json"),
                   ("x-goog-content-length-range", "1,8388608"),
                   ("x-goog-content-sha256", "UNSIGNED-PAYLOAD"),
                   ("x-goog-if-generation-match", "0"),
                   ("x-goog-meta-mostlyright-crawler-session", "s-1"),
                   ("x-goog-meta-mostlyright-request-digest", "d" * 64),
                   ("x-goog-meta-mostlyright-egress-policy", "p" * 64)]
        url = self.store.sign_put(BUCKET, name, headers, expires_in_s=2100)
        self.assertIn("&X-Goog-SignedHeaders=" + "%3B".join([
            "content-type", "host", "x-goog-content-length-range", "x-goog-content-sha256",
            "x-goog-if-generation-match", "x-goog-meta-mostlyright-crawler-session",
            "x-goog-meta-mostlyright-egress-policy", "x-goog-meta-mostlyright-request-digest"])
            + "&X-Goog-Signature=", url)
        self.assertRefused(self.put(url, b"", headers), 400, "EntityTooSmall")
        self.assertEqual(self.put(url, BODY, headers)[0], 200)
        obj = self.store.objects()[BUCKET + "/" + name]
        self.assertEqual((obj.sha256, obj.metadata["mostlyright-crawler-session"]),
                         (hashlib.sha256(BODY).hexdigest(), "s-1"))
        self.assertEqual(self.put(url, BODY, headers)[0], 412)

    def test_put_over_https(self):
        self.store.close()
        self.store = ObjectStore(self.root, tls=True, name="gcs")
        self.assertTrue(self.store.origin.startswith("https://127.0.0.1:"))
        url, headers = self.sign()
        self.assertEqual(self.put(url, BODY, headers)[0], 200)
        self.assertEqual(self.store.objects()[KEY].sha256, hashlib.sha256(BODY).hexdigest())

    def test_bare_put_keeps_the_s3_answer(self):
        status, _rh, body = self.put(self.store.url_for(KEY), BODY, [])
        self.assertEqual((status, b"<Code>MethodNotAllowed</Code>" in body), (405, True))


class RefusedPutTest(GcsPutCase):

    def test_tampered_header_value(self):
        url, headers = self.sign()
        tampered = [(k, "4" if k == "x-goog-meta-shard" else v) for k, v in headers]
        result = self.put(url, BODY, tampered)
        self.assertRefused(result, 403, "SignatureDoesNotMatch")
        body = result[2]
        self.assertEqual(xml_field(body, "Message"), "Access denied.")
        self.assertIn("does not match the signature you provided", xml_field(body, "Details"))
        self.assertTrue(xml_field(body, "StringToSign").startswith("GOOG4-RSA-SHA256\n"))
        self.assertIn("x-goog-meta-shard:4\n", xml_field(body, "CanonicalRequest"))
        self.wait_done()
        ex = self.last_put()
        self.assertEqual((ex.notes["signed"], ex.notes["header_mismatch"]), (False, ["x-goog-meta-shard"]))
        self.assertEqual(ex.error_code, "SignatureDoesNotMatch")

    def test_missing_signed_header(self):
        # Real GCS answers MalformedSecurityHeader here, not SignatureDoesNotMatch.
        url, headers = self.sign()
        result = self.put(url, BODY, [kv for kv in headers if kv[0] != "x-goog-meta-producer"])
        self.assertRefused(result, 400, "MalformedSecurityHeader")
        self.assertEqual(xml_field(result[2], "ParameterName"), "x-goog-meta-producer")

    def test_unsigned_goog_header(self):
        url, headers = self.sign()
        result = self.put(url, BODY, headers + [("x-goog-meta-extra", "1")])
        self.assertRefused(result, 400, "MalformedSecurityHeader")
        self.assertEqual(xml_field(result[2], "ParameterName"), "x-goog-meta-extra")

    def test_query_changed(self):
        url, headers = self.sign()
        self.assertRefused(self.put(url.replace("X-Goog-Expires=900", "X-Goog-Expires=901"), BODY, headers),
                           403, "SignatureDoesNotMatch")
        self.assertRefused(self.put(url + "&extra=1", BODY, headers), 403, "SignatureDoesNotMatch")
        self.assertRefused(self.put(url.replace("/part-0003", "/part-0004"), BODY, headers),
                           403, "SignatureDoesNotMatch")
        self.assertRefused(self.put(url, BODY, headers, host="127.0.0.1"), 403, "SignatureDoesNotMatch")
        no_date = "&".join(p for p in url.split("&") if not p.startswith("X-Goog-Date="))
        result = self.put(no_date, BODY, headers)
        self.assertRefused(result, 400, "MalformedSecurityHeader")
        self.assertEqual(xml_field(result[2], "ParameterName"), "X-Goog-Date")
        self.assertRefused(self.put(url.replace("GOOG4-RSA-SHA256", "GOOG4-HMAC-SHA256"), BODY, headers),
                           400, "MalformedSecurityHeader")
        self.assertEqual(self.put(url, BODY, headers)[0], 200)   # the untouched URL still works

    def test_expired_url(self):
        url, headers = self.sign(expires_in_s=60)
        self.store.advance_clock(61)
        result = self.put(url, BODY, headers)
        self.assertRefused(result, 400, "ExpiredToken")
        self.assertEqual(xml_field(result[2], "Message"), "The provided token has expired.")
        url, headers = self.sign(expires_in_s=60, issued_at=self.store.now() - 120)
        self.assertRefused(self.put(url, BODY, headers), 400, "ExpiredToken")

    def test_future_date(self):
        url, headers = self.sign(issued_at=self.store.now() + 16 * 60)
        result = self.put(url, BODY, headers)
        self.assertRefused(result, 400, "ExpiredToken")
        self.assertIn("not valid yet", xml_field(result[2], "Details"))
        url, headers = self.sign(issued_at=self.store.now() + 60)   # within the skew allowed
        self.assertEqual(self.put(url, BODY, headers)[0], 200)

    def test_revoked_signature(self):
        url, headers = self.sign()
        self.store.revoke_signature(url.rsplit("X-Goog-Signature=", 1)[1])
        self.assertRefused(self.put(url, BODY, headers), 403, "AccessDenied")

    def test_body_differs_from_signed_sha256(self):
        url, headers = self.sign()
        other = BODY[:-1] + b"?"
        self.assertRefused(self.put(url, other, headers), 400, "BadDigest")

    def test_content_length_above_range_answers_at_headers(self):
        url, headers = self.sign()
        c = RawPut(self.store.server.port)
        try:
            c.send(raw_head(url, headers, content_length=MAX_BYTES + 1))   # the head only
            status, rh, body = c.response()
        finally:
            c.close()
        self.assertEqual((status, xml_field(body, "Code"), rh["connection"]), (400, "EntityTooLarge", "close"))
        self.wait_done()
        ex = self.last_put()
        self.assertEqual((ex.notes["body_bytes_at_answer"], ex.req_bytes), (0, 0))
        self.assertNothingStored()

    def test_content_length_below_range(self):
        small = b"tiny"
        url, headers = self.sign(small, crawler_headers(small, length_range="10,100"))
        self.assertRefused(self.put(url, small, headers), 400, "EntityTooSmall")

    def test_chunked_and_missing_length_are_411(self):
        url, headers = self.sign()
        c = RawPut(self.store.server.port)
        try:
            c.send(raw_head(url, headers, extra=[("Transfer-Encoding", "chunked")])
                   + b"%x\r\n" % len(BODY) + BODY + b"\r\n0\r\n\r\n")
            status, rh, body = c.response()
        finally:
            c.close()
        self.assertEqual((status, xml_field(body, "Code"), rh["connection"]), (411, "MissingContentLength", "close"))
        c = RawPut(self.store.server.port)
        try:
            c.send(raw_head(url, headers))
            status, rh, body = c.response()
        finally:
            c.close()
        self.assertEqual((status, xml_field(body, "Code"), rh["connection"]), (411, "MissingContentLength", "close"))
        self.assertNothingStored()

    def test_short_body_then_close_commits_nothing(self):
        url, headers = self.sign()
        c = RawPut(self.store.server.port)
        c.send(raw_head(url, headers, content_length=len(BODY)) + BODY[:len(BODY) // 2])
        self.assertIsNotNone(self.store.wait_for(
            lambda e: e.kind == "request" and e.method == "PUT", SHORT_TIMEOUT_S))
        c.close()
        self.wait_done()
        self.assertEqual(self.last_put().outcome, "client-gone")
        self.assertNothingStored()


class RacingPutTest(GcsPutCase):

    def test_two_concurrent_puts_one_wins(self):
        url, headers = self.sign()
        head = raw_head(url, headers, content_length=len(BODY))
        half = len(BODY) // 2
        clients = [RawPut(self.store.server.port) for _ in range(2)]
        try:
            for c in clients:
                c.send(head + BODY[:half])
            # Both exchanges are in flight, bodies half read, before either can commit.
            self.assertTrue(self.store.wait_until(
                lambda: len([ex for ex in self.store.transcript if ex.method == "PUT"]) == 2,
                SHORT_TIMEOUT_S))
            statuses = []
            go = threading.Barrier(2)

            def finish(c):
                go.wait(SHORT_TIMEOUT_S)
                c.send(BODY[half:])
                statuses.append(c.response()[0])
            threads = [threading.Thread(target=finish, args=(c,)) for c in clients]
            for t in threads:
                t.start()
            for t in threads:
                t.join(SHORT_TIMEOUT_S)
        finally:
            for c in clients:
                c.close()
        self.assertEqual(sorted(statuses), [200, 412])
        self.assertEqual([o.origin for o in self.store.commit_log()], ["gcs-put"])
        self.assertEqual(len(os.listdir(os.path.join(self.root, "objects"))), 1)
        self.assertEqual(os.listdir(os.path.join(self.root, "tmp")), [])


class FaultAndSecretTest(GcsPutCase):

    def test_status_fault_applies_to_put(self):
        url, headers = self.sign()
        rule = self.store.add_fault(faults.status(503, s3_code="SlowDown"),
                                    Match(method="PUT", key=BUCKET + "/*", first=1))
        self.assertEqual(self.put(url, BODY, headers)[0], 503)
        self.assertNothingStored()
        self.assertEqual(rule.applied, 1)
        self.assertEqual(self.put(url, BODY, headers)[0], 200)   # the fault is spent; create-only holds
        self.assertEqual(self.store.objects()[KEY].generation, 1)

    def test_reset_fault_mid_body_commits_nothing(self):
        url, headers = self.sign()
        self.store.add_fault(faults.reset(after_bytes=1000), Match(method="PUT", first=1))
        with self.assertRaises((ConnectionError, http.client.HTTPException, OSError)):
            self.put(url, BODY, headers)
        self.wait_done()
        self.assertEqual(self.last_put().outcome, "reset")
        self.assertNothingStored()

    def test_signature_never_in_transcript(self):
        url, headers = self.sign()
        signature = url.rsplit("X-Goog-Signature=", 1)[1]
        self.assertEqual(self.put(url, BODY, headers)[0], 200)
        self.put(url.replace("X-Goog-Expires=900", "X-Goog-Expires=901"), BODY, headers)
        self.wait_done(2)
        for ex in self.store.transcript:
            self.assertEqual(ex.path, "/crawl-bucket/runs/7/part-0003.ndjson?" + MASK)
            self.assertEqual(ex.query_names, list(GCS_QUERY_PARAMS))
        dump = repr(self.store.transcript) + repr(self.store.events) + repr(self.store.connections)
        self.assertNotIn(signature, dump)
        self.assertNotIn(signature[:32], dump)
        self.assertIn(signature, self.store.secrets())


if __name__ == "__main__":
    unittest.main()
