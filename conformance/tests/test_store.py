"""The object store: presigned GET, presigned POST and its policy, objects on disk, the dialect interface."""

import base64
import hashlib
import http.client
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

from conformance import faults, servers
from conformance.faults import Match
from conformance.servers import CA_FILE, MASK
from conformance.store import GENERATED_BLOCK_BYTES, ObjectStore
from conformance.store import multipart as store_multipart
from conformance.store.core import Dialect, Route, StoreCore, dialect_attribute, dialect_method, key_from_path
from conformance.store.s3 import S3Dialect
from conformance.tests.test_servers import RawClient, multipart, pattern_bytes, threads_named
from conformance.timeouts import SHORT_TIMEOUT_S

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def fetch(url, data=None, headers=None, context=None):
    """(status, headers, body) of one urllib request; HTTP errors included."""
    req = urllib.request.Request(url, data=data, headers=headers or {})
    opener = _OPENER if context is None else urllib.request.build_opener(
        _NoRedirect, urllib.request.HTTPSHandler(context=context))
    try:
        with opener.open(req, timeout=SHORT_TIMEOUT_S) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def error_code(body):
    text = body.decode()
    return text.split("<Code>", 1)[1].split("</Code>", 1)[0]


def error_message(body):
    text = body.decode()
    return text.split("<Message>", 1)[1].split("</Message>", 1)[0]


class _FakeBody(object):
    """A request body that returns exactly what is asked for, no more."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    @property
    def finished(self):
        return self.pos >= len(self.data)

    def readinto(self, mv):
        n = min(len(mv), len(self.data) - self.pos)
        mv[:n] = self.data[self.pos:self.pos + n]
        self.pos += n
        return n

    readinto_full = readinto

    def drain(self):
        self.pos = len(self.data)


class _FakeExchange(object):
    seq = 1


class _FakeCtx(object):
    exchange = _FakeExchange()
    body = None


class StoreCase(unittest.TestCase):
    tls = False

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="store-test-")
        self.store = ObjectStore(self.root, tls=self.tls, name="sto")
        self.token = self.store.new_token()
        self.post = self.store.presign_post("out/run-1/", self.token, max_bytes=1 << 20)

    def tearDown(self):
        self.store.close()
        self.assertEqual(self.store.errors, [])
        self.assertEqual(threads_named("sto-"), [])
        shutil.rmtree(self.root, ignore_errors=True)

    def upload(self, key="out/run-1/x.bin", data=b"hello\n", fields=None, **kw):
        body, ctype = multipart(self.post["fields"] if fields is None else fields, key, data, **kw)
        return fetch(self.post["url"], body, {"Content-Type": ctype})

    def assertRefused(self, result, status, code, message=None):
        got_status, _headers, body = result
        self.assertEqual((got_status, error_code(body)), (status, code), body)
        if message is not None:
            self.assertIn(message, error_message(body))
        self.assertEqual([o.origin for o in self.store.commit_log() if o.origin == "upload"], [])
        self.assertEqual(os.listdir(os.path.join(self.root, "tmp")), [])


class PresignedGetTest(StoreCase):

    def setUp(self):
        StoreCase.setUp(self)
        self.data = pattern_bytes(300000)
        self.sha, self.size = self.store.put("in/a b.bin", self.data)

    def test_happy_path(self):
        url = self.store.presign_get("in/a b.bin", self.token)
        self.assertIn("X-Amz-Security-Token=" + self.token, url)
        for name in ("X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Credential=", "X-Amz-Date=",
                     "X-Amz-Expires=900", "X-Amz-SignedHeaders=host", "X-Amz-Signature="):
            self.assertIn(name, url)
        status, headers, body = fetch(url)
        self.assertEqual((status, body), (200, self.data))
        self.assertEqual(int(headers["Content-Length"]), self.size)
        self.assertEqual(self.sha, hashlib.sha256(self.data).hexdigest())
        self.assertEqual(headers["ETag"], '"%s"' % self.sha[:32])

    def test_bad_signature(self):
        url = self.store.presign_get("in/a b.bin", self.token)
        tampered = url.replace("X-Amz-Expires=900", "X-Amz-Expires=901")
        self.assertRefused(fetch(tampered), 403, "SignatureDoesNotMatch")

    def test_other_key_with_same_query_is_refused(self):
        url = self.store.presign_get("in/a b.bin", self.token)
        self.store.put("in/other", b"x")
        self.assertRefused(fetch(url.replace("/in/a%20b.bin?", "/in/other?")), 403, "SignatureDoesNotMatch")

    def test_expired_url(self):
        url = self.store.presign_get("in/a b.bin", self.token, expires_in_s=60,
                                     issued_at=time.time() - 120)
        self.assertRefused(fetch(url), 403, "AccessDenied", "Request has expired")
        url = self.store.presign_get("in/a b.bin", self.token, expires_in_s=60)
        self.assertEqual(fetch(url)[0], 200)
        self.store.advance_clock(61)
        self.assertRefused(fetch(url), 403, "AccessDenied", "Request has expired")

    def test_expired_token(self):
        url = self.store.presign_get("in/a b.bin", self.token)
        self.store.expire_token(self.token)
        self.assertRefused(fetch(url), 400, "ExpiredToken")
        fresh = self.store.new_token()
        self.assertEqual(fetch(self.store.presign_get("in/a b.bin", fresh))[0], 200)

    def test_missing_key_and_unsigned(self):
        self.assertRefused(fetch(self.store.presign_get("in/none", self.token)), 404, "NoSuchKey")
        self.assertRefused(fetch(self.store.url_for("in/a b.bin")), 403, "AccessDenied")
        self.assertRefused(fetch(self.store.url_for("in/a b.bin") + "?X-Amz-Signature=x"),
                           400, "AuthorizationQueryParametersError")

    def test_manifest_document_with_fault(self):
        self.store.put_json("jobs/manifest.json", {"schema_version": 1})
        url = self.store.presign_get("jobs/manifest.json", self.token)
        self.store.add_fault(faults.status(503, s3_code="SlowDown"), Match(key="jobs/*.json", first=1))
        self.assertEqual(fetch(url)[0], 503)
        status, headers, body = fetch(url)
        self.assertEqual((status, headers["Content-Type"], json.loads(body)),
                         (200, "application/json", {"schema_version": 1}))

    def test_put_method_not_allowed(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.store.server.port, timeout=SHORT_TIMEOUT_S)
        conn.request("PUT", "/in/x", body=b"x")
        r = conn.getresponse()
        self.assertEqual((r.status, error_code(r.read())), (405, "MethodNotAllowed"))
        conn.close()

    def test_keep_alive_and_head(self):
        url = self.store.presign_get("in/a b.bin", self.token)
        target = url.split(str(self.store.server.port), 1)[1]
        conn = http.client.HTTPConnection("127.0.0.1", self.store.server.port, timeout=SHORT_TIMEOUT_S)
        for _ in range(2):
            conn.request("GET", target)
            r = conn.getresponse()
            self.assertEqual(r.read(), self.data)
        conn.request("HEAD", target)
        r = conn.getresponse()
        self.assertEqual((r.status, int(r.headers["Content-Length"]), r.read()), (200, self.size, b""))
        conn.close()
        self.assertEqual(len(set(ex.conn_id for ex in self.store.transcript)), 1)

    def test_transcript_masks_token_and_secrets_are_listed(self):
        url = self.store.presign_get("in/a b.bin", self.token)
        fetch(url)
        self.upload()
        ex = self.store.transcript[0]
        self.assertEqual(ex.path, "/in/a%20b.bin?" + MASK)
        self.assertEqual(ex.key, "in/a b.bin")
        self.assertIn("X-Amz-Security-Token", ex.query_names)
        dump = repr(self.store.transcript) + repr(self.store.events) + repr(self.store.connections)
        self.assertNotIn(self.token, dump)
        self.assertNotIn("CANARY", dump)
        issued = self.store.secrets()
        signature = url.rsplit("X-Amz-Signature=", 1)[1]
        for value in (self.token, signature, self.post["fields"]["policy"],
                      self.post["fields"]["x-amz-signature"]):
            self.assertIn(value, issued)
        self.assertTrue(self.token.startswith("CANARY"))

    def test_header_token_is_masked(self):
        c = RawClient(self.store.server.port)
        c.send_request("GET", "/in/x", [("X-Amz-Security-Token", self.token), ("X-Echo", self.token)])
        self.assertEqual(c.response()[0], 403)
        c.close()
        self.assertNotIn(self.token, repr(self.store.transcript))


class GeneratedObjectTest(StoreCase):

    def test_generated_hash_equals_bytes(self):
        size = 2 * GENERATED_BLOCK_BYTES + 12345
        sha, got_size = self.store.serve_generated("in/gen", size, seed=42)
        h = hashlib.sha256()
        n = 0
        for block in self.store.generated_bytes(size, 42):
            h.update(block)
            n += len(block)
        self.assertEqual((h.hexdigest(), n, got_size), (sha, size, size))
        self.assertEqual(self.store.read_hash("in/gen"), (sha, size))
        # Blocks differ from one another (not a short period).
        blocks = [bytes(b) for b in self.store.generated_bytes(2 * GENERATED_BLOCK_BYTES, 42)]
        self.assertNotEqual(blocks[0], blocks[1])
        status, _h, body = fetch(self.store.presign_get("in/gen", self.token))
        self.assertEqual((status, hashlib.sha256(body).hexdigest(), len(body)), (200, sha, size))
        self.assertNotEqual(self.store.serve_generated("in/gen2", size, seed=43)[0], sha)
        self.assertEqual(os.listdir(os.path.join(self.root, "objects")), [])   # no disk used


class PresignedPostTest(StoreCase):

    def test_fields_shape(self):
        fields = self.post["fields"]
        self.assertEqual(self.post["url"], self.store.origin + "/upload")
        self.assertEqual(self.post["key_prefix"], "out/run-1/")
        self.assertEqual(list(fields), ["x-amz-algorithm", "x-amz-credential", "x-amz-date",
                                        "x-amz-security-token", "policy", "x-amz-signature"])
        policy = json.loads(base64.b64decode(fields["policy"]))
        self.assertRegex(policy["expiration"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z\Z")
        conds = policy["conditions"]
        self.assertIn(["starts-with", "$key", "out/run-1/"], conds)
        self.assertIn(["content-length-range", 0, 1 << 20], conds)
        self.assertIn({"x-amz-security-token": self.token}, conds)

    def test_happy_path(self):
        data = pattern_bytes(700000)
        status, headers, body = self.upload("out/run-1/sub/x.bin", data)
        self.assertEqual((status, body), (204, b""))
        obj = self.store.objects()["out/run-1/sub/x.bin"]
        self.assertEqual((obj.sha256, obj.size, obj.origin), (hashlib.sha256(data).hexdigest(), len(data), "upload"))
        self.assertEqual(headers["ETag"], obj.etag)
        self.assertEqual(headers["Location"], self.store.origin + "/out/run-1/sub/x.bin")
        with open(obj.path, "rb") as f:
            self.assertEqual(f.read(), data)
        self.assertEqual(self.store.read_hash("out/run-1/sub/x.bin"), (obj.sha256, obj.size))
        self.assertTrue(self.store.wait_until(lambda: obj.t_response_sent is not None, SHORT_TIMEOUT_S))
        self.assertTrue(obj.t_request <= obj.t_body_done <= obj.committed_at <= obj.t_response_sent)
        ex = self.store.transcript[-1]
        self.assertEqual(ex.notes["form_fields"][-1], "key")
        self.assertEqual((ex.notes["file_name"], ex.notes["file_content_type"]),
                         ("x.bin", "application/octet-stream"))
        self.assertEqual(os.listdir(os.path.join(self.root, "tmp")), [])

    def test_trap_bytes_near_block_boundaries(self):
        # Bytes that look like the start of the delimiter, around the reader's
        # block boundary, stay file content (end to end over HTTP).
        block = servers.IO_BLOCK_BYTES
        self.post = self.store.presign_post("out/run-1/", self.token, max_bytes=4 * block)
        trap = b"\r\n------lspo0123"
        for size in (block - 43, block + 1, 2 * block - 40):
            data = ((trap + pattern_bytes(97)) * (size // 112 + 1))[:size]
            key = "out/run-1/s%d" % size
            self.assertEqual(self.upload(key, data)[0], 204)
            self.assertEqual(self.store.objects()[key].sha256, hashlib.sha256(data).hexdigest(), size)

    def test_delimiter_cut_at_every_offset(self):
        # The file loop directly, with reads of exactly one block: the closing
        # delimiter (or a false prefix of it) is cut at every possible offset.
        block = 4096
        boundary = b"----lspo0123456789abcdef0123456789abcdef"
        delim = b"\r\n--" + boundary
        ctx = _FakeCtx()
        for leftover_len in (0, 100):
            for cut in range(0, len(delim) + 2):
                for trap in (b"", delim[:min(cut, len(delim) - 1)]):
                    size = block + leftover_len - cut
                    data = pattern_bytes(size - len(trap)) + trap
                    stream = data + delim + b"--\r\n"
                    ctx.body = _FakeBody(stream[leftover_len:])
                    up = store_multipart.FormReader(ctx.body, boundary,
                                                    self.store.temp_path("upload", ctx.exchange.seq))
                    saved = store_multipart.IO_BLOCK_BYTES
                    store_multipart.IO_BLOCK_BYTES = block
                    try:
                        sha, got, after = up.stream_file(stream[:leftover_len], True, None)
                    finally:
                        store_multipart.IO_BLOCK_BYTES = saved
                        up.cleanup()
                    self.assertEqual((got, sha, after), (size, hashlib.sha256(data).hexdigest(), []),
                                     (leftover_len, cut, trap))

    def test_empty_file(self):
        self.assertEqual(self.upload("out/run-1/empty", b"")[0], 204)
        self.assertEqual(self.store.objects()["out/run-1/empty"].size, 0)

    def test_key_outside_prefix(self):
        self.assertRefused(self.upload("out/run-2/x.bin"), 403, "AccessDenied",
                           'Invalid according to Policy: Policy Condition failed: ["starts-with", "$key", "out/run-1/"]')

    def test_too_large(self):
        self.assertRefused(self.upload(data=b"x" * ((1 << 20) + 1)), 400, "EntityTooLarge")

    def test_too_small(self):
        self.post = self.store.presign_post("out/run-1/", self.token, min_bytes=10)
        self.assertRefused(self.upload(data=b"x"), 400, "EntityTooSmall")

    def test_missing_field(self):
        fields = dict(self.post["fields"])
        del fields["x-amz-date"]
        self.assertRefused(self.upload(fields=fields), 400, "InvalidArgument")

    def test_wrong_field_value(self):
        fields = dict(self.post["fields"])
        fields["x-amz-date"] = "20000101T000000Z"
        self.assertRefused(self.upload(fields=fields), 403, "AccessDenied", "Policy Condition failed")

    def test_extra_field(self):
        fields = dict(self.post["fields"])
        fields["acl"] = "public-read"
        self.assertRefused(self.upload(fields=fields), 403, "AccessDenied", "Extra input fields: acl")

    def test_bad_policy_signature(self):
        fields = dict(self.post["fields"])
        fields["x-amz-signature"] = "0" * 64
        self.assertRefused(self.upload(fields=fields), 403, "SignatureDoesNotMatch")

    def test_expired_policy(self):
        self.post = self.store.presign_post("out/run-1/", self.token, expires_in_s=60,
                                            issued_at=time.time() - 120)
        self.assertRefused(self.upload(), 403, "AccessDenied", "Policy expired")

    def test_expired_token(self):
        self.store.expire_token(self.token)
        self.assertRefused(self.upload(), 400, "ExpiredToken")

    def test_file_not_last(self):
        # key sent after the file: ignored as S3 ignores it, so the key is missing.
        fields = dict(self.post["fields"])
        body, ctype = multipart(fields, "ignored", b"data", after_file=[("key", "out/run-1/x")])
        body = body.replace(b'name="key"\r\n\r\nignored\r\n', b'name="x-ignore-k"\r\n\r\nv\r\n')
        result = fetch(self.post["url"], body, {"Content-Type": ctype})
        self.assertRefused(result, 400, "InvalidArgument", "must contain a field named 'key'")
        self.assertEqual(self.store.transcript[-1].notes["fields_after_file"], ["key"])

    def test_no_file_part(self):
        b = "----lspoX"
        body = ('--%s\r\nContent-Disposition: form-data; name="key"\r\n\r\nout/run-1/x\r\n--%s--\r\n'
                % (b, b)).encode()
        self.assertRefused(fetch(self.post["url"], body, {"Content-Type": "multipart/form-data; boundary=" + b}),
                           400, "InvalidArgument", "exactly one file")

    def test_body_without_closing_delimiter(self):
        body, ctype = multipart(self.post["fields"], "out/run-1/x", b"data")
        body = body[:body.rindex(b"\r\n--")]
        self.assertRefused(fetch(self.post["url"], body, {"Content-Type": ctype}), 400, "MalformedPOSTRequest")

    def test_not_multipart(self):
        self.assertRefused(fetch(self.post["url"], b"a=b", {"Content-Type": "application/x-www-form-urlencoded"}),
                           412, "PreconditionFailed")

    def test_chunked_is_411(self):
        body, ctype = multipart(self.post["fields"], "out/run-1/x", b"data")
        c = RawClient(self.store.server.port)
        c.sock.sendall(("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n%x\r\n" % (ctype, len(body))).encode()
                       + body + b"\r\n0\r\n\r\n")
        code, _r, headers, xml = c.response()
        c.close()
        self.assertEqual((code, error_code(xml), headers.get("connection")), (411, "MissingContentLength", "close"))
        self.assertEqual(self.store.objects(), {})

    def test_missing_content_length_is_411(self):
        c = RawClient(self.store.server.port)
        c.sock.sendall(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=x\r\n\r\n")
        code, _r, _h, xml = c.response()
        c.close()
        self.assertEqual((code, error_code(xml)), (411, "MissingContentLength"))

    def test_overwrite_is_logged(self):
        self.upload(data=b"one")
        self.upload(data=b"two")
        log = [o for o in self.store.commit_log() if o.origin == "upload"]
        self.assertEqual([o.size for o in log], [3, 3])
        self.assertEqual(log[1].seq, log[0].seq + 1)
        self.assertEqual(self.store.objects()["out/run-1/x.bin"].sha256, hashlib.sha256(b"two").hexdigest())

    def test_commit_event(self):
        self.upload()
        ev = self.store.wait_for(lambda e: e.kind == "commit", SHORT_TIMEOUT_S)
        self.assertEqual((ev.key, ev.bytes), ("out/run-1/x.bin", 6))


class HttpsStoreTest(StoreCase):
    tls = True

    def test_get_and_post_over_https(self):
        self.assertTrue(self.store.origin.startswith("https://127.0.0.1:"))
        self.store.put("in/a", b"secret bytes")
        ctx = ssl.create_default_context(cafile=CA_FILE)
        status, _h, body = fetch(self.store.presign_get("in/a", self.token), context=ctx)
        self.assertEqual((status, body), (200, b"secret bytes"))
        payload, ctype = multipart(self.post["fields"], "out/run-1/t", b"tls upload")
        status, _h, _b = fetch(self.post["url"], payload, {"Content-Type": ctype}, context=ctx)
        self.assertEqual(status, 204)

    def test_ssl_cert_file_trusts_the_test_ca(self):
        self.store.put("in/a", b"via SSL_CERT_FILE")
        url = self.store.presign_get("in/a", self.token)
        env = {"PATH": os.environ.get("PATH", ""), "SSL_CERT_FILE": CA_FILE, "PYTHONDONTWRITEBYTECODE": "1"}
        out = subprocess.run([sys.executable, "-c", "import sys, urllib.request; "
                              "sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())", url],
                             env=env, capture_output=True, text=True, timeout=SHORT_TIMEOUT_S)
        self.assertEqual((out.returncode, out.stdout), (0, "via SSL_CERT_FILE"), out.stderr)


class CaFilesTest(unittest.TestCase):

    def test_ca_files_present_and_no_ca_key(self):
        ca_dir = os.path.join(ROOT, "conformance", "ca")
        for name in ("ca.pem", "server.pem", "server.key", "README"):
            self.assertTrue(os.path.isfile(os.path.join(ca_dir, name)), name)
        self.assertFalse(os.path.exists(os.path.join(ca_dir, "ca.key")))


class _DeleteDialect(Dialect):
    """A toy provider: DELETE /<key> removes the object. It is composed into a
    store below without any change to the core (the interface's promise)."""
    name = "toy"

    def __init__(self, store):
        Dialect.__init__(self, store)
        self.deleted = []

    def routes(self):
        return [Route("DELETE", "/*", self._handle_delete, key=key_from_path)]

    def _handle_delete(self, ctx):
        ctx.body.drain()
        ctx.body_finished()
        key = ctx.request.path[1:]
        self.store.delete(key)
        self.deleted.append(key)
        ctx.respond(204)

    def signed_delete_url(self, key):
        return self.store.url_for(key) + "?sig=" + self.store.sign(key)


class _ToyStore(StoreCore):
    def __init__(self, root_dir):
        StoreCore.__init__(self, root_dir, (S3Dialect, _DeleteDialect), name="toy")

    signed_delete_url = dialect_method("toy", _DeleteDialect.signed_delete_url)
    deleted = dialect_attribute("toy", "deleted")


class DialectInterfaceTest(unittest.TestCase):
    """A dialect plugs into the core through routes(), sign() and the store API helpers."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="store-dialect-test-")
        self.store = _ToyStore(self.root)

    def tearDown(self):
        self.store.close()
        self.assertEqual(self.store.errors, [])
        self.assertEqual(threads_named("toy-"), [])
        shutil.rmtree(self.root, ignore_errors=True)

    def test_a_new_dialect_needs_no_change_to_the_core(self):
        self.store.put("in/a.bin", b"abc")
        url = self.store.signed_delete_url("in/a.bin")
        self.assertEqual(url.rsplit("=", 1)[1], self.store.sign("in/a.bin"))
        with _OPENER.open(urllib.request.Request(url, method="DELETE"), timeout=SHORT_TIMEOUT_S) as r:
            self.assertEqual(r.status, 204)
        self.assertEqual((self.store.objects(), self.store.deleted), ({}, ["in/a.bin"]))
        # What no route serves is still answered by the first dialect, the store's voice.
        status, headers, body = fetch(self.store.url_for("in/a.bin"), data=b"x")
        self.assertEqual((status, error_code(body), headers["Server"]), (405, "MethodNotAllowed", "AmazonS3"))


if __name__ == "__main__":
    unittest.main()
