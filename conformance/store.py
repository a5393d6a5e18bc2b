"""The fake object store every plane uses: S3-style presigned GET and POST.

    store = ObjectStore(root_dir)                 # loopback server on port 0
    token = store.new_token()                     # "CANARY..." (a secret canary)
    url = store.presign_get("in/a.bin", token)    # GET origin/in/a.bin?X-Amz-...
    post = store.presign_post("out/run-1/", token)  # {"url", "fields", "key_prefix"}
    ...
    store.objects()["out/run-1/result.json"].sha256
    store.close()

What it enforces, as S3 does (codes and texts as S3 sends them):

* GET: the query is a SigV4-shaped presigned query (X-Amz-Algorithm,
  X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders,
  X-Amz-Security-Token, X-Amz-Signature). The signature is simply
  HMAC-SHA256(store secret, "METHOD\\n/key\\ncanonical query"): shaped like S3,
  not S3's algorithm. Bad signature: 403 SignatureDoesNotMatch; past
  X-Amz-Date + X-Amz-Expires: 403 AccessDenied "Request has expired"; token
  expired by expire_token(): 400 ExpiredToken (S3 answers 400 for an expired
  session token); absent key: 404 NoSuchKey.
* POST /upload: multipart/form-data parsed while streaming (fields before
  ``file``; the file streamed to a temp file while hashed; anything after the
  file part is ignored, as S3 ignores it). Checked: the policy's signature
  (403 SignatureDoesNotMatch), the token (400 ExpiredToken / InvalidToken),
  the policy's expiration and every condition (403 AccessDenied "Invalid
  according to Policy: ..."), every form field covered by the policy ("Extra
  input fields"), the file size against content-length-range (400
  EntityTooLarge / EntityTooSmall), a ``key`` field (400 InvalidArgument),
  Content-Length present and not chunked (411 MissingContentLength). Success:
  204 No Content with ETag and Location (S3's default success_action_status),
  the object committed by rename once the whole body has been parsed.

Objects live on disk under root_dir/objects (one file per commit), with
sha256, size, a commit sequence number and a write timeline (monotonic
times: request began, body read, committed, response sent).
``serve_generated`` registers a virtual object of deterministic bytes made on
the fly, so a 1 GiB input costs no disk. The ETag is the first 32 hex digits
of the sha256 (S3 uses MD5; computing a second digest would double the
store's CPU per GiB).
"""

import base64
import datetime
import email.utils
import hashlib
import hmac
import json
import os
import random
import re
import secrets as _secrets
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Optional

from conformance.servers import (
    IO_BLOCK_BYTES, FileSource, LoopbackServer, s3_error_xml, S3_MESSAGES,
)

__all__ = ["ObjectStore", "Obj", "GeneratedSource", "UPLOAD_PATH"]

UPLOAD_PATH = "/upload"
ALGORITHM = "AWS4-HMAC-SHA256"
REGION = "us-east-1"
# Largest object a presigned POST admits unless presign_post says otherwise.
DEFAULT_MAX_BYTES = 1 << 30
# S3 refuses a POST whose fields before the file exceed 20 KB.
MAX_PRE_DATA_BYTES = 20 * 1024
# While reading the fields, read in blocks this small: the key (and so a
# key-matched fault) is known after at most this much read-ahead, which keeps
# request-side fault positions exact from here on.
FIELD_READ_BYTES = 4096
# The repeating unit of generated objects.
GENERATED_BLOCK_BYTES = 1 << 20
# S3 refuses a presigned URL dated this far in the future ("not valid yet").
MAX_CLOCK_SKEW_S = 15 * 60

_generated_hash_cache = {}
_generated_cache_lock = threading.Lock()


@dataclass
class Obj:
    """A committed object. Times are time.monotonic(); None when not applicable.

    origin: "put" (seeded by the harness), "generated" (virtual), "upload"
    (a POST). t_request/t_body_done/t_response_sent come from the upload's
    exchange; t_response_sent stays None when the answer never went out.
    """
    key: str
    sha256: str
    size: int
    path: Optional[str]
    seq: int
    committed_at: float
    origin: str = "put"
    content_type: str = "application/octet-stream"
    t_request: Optional[float] = None
    t_body_done: Optional[float] = None
    t_response_sent: Optional[float] = None
    exchange_seq: Optional[int] = None
    generator_seed: Optional[int] = None

    @property
    def etag(self):
        return '"%s"' % self.sha256[:32]


class GeneratedSource(object):
    """`size` deterministic bytes from `seed`, made on the fly.

    Block i (GENERATED_BLOCK_BYTES each) is one seeded random block with its
    first 8 bytes replaced by i (big-endian), so the bytes are not periodic:
    a node that skips or repeats a block gets a different hash.
    """

    def __init__(self, size, seed):
        self.length = size
        self.seed = seed
        self._base = random.Random(seed).getrandbits(GENERATED_BLOCK_BYTES * 8).to_bytes(
            GENERATED_BLOCK_BYTES, "little")

    def iter_blocks(self, start, end, max_block):
        block = bytearray(self._base)
        mv = memoryview(block)
        while start < end:
            index, offset = divmod(start, GENERATED_BLOCK_BYTES)
            block[0:8] = index.to_bytes(8, "big")
            stop = min(GENERATED_BLOCK_BYTES, offset + (end - start))
            pos = offset
            while pos < stop:
                n = min(max_block, stop - pos)
                yield mv[pos:pos + n]
                pos += n
            start += stop - offset

    def send_range(self, conn, start, end, progress):
        for block in self.iter_blocks(start, end, GENERATED_BLOCK_BYTES):
            conn.send(block)
            progress(len(block))

    def sha256(self):
        key = (self.length, self.seed)
        with _generated_cache_lock:
            if key in _generated_hash_cache:
                return _generated_hash_cache[key]
        h = hashlib.sha256()
        for block in self.iter_blocks(0, self.length, GENERATED_BLOCK_BYTES):
            h.update(block)
        digest = h.hexdigest()
        with _generated_cache_lock:
            _generated_hash_cache[key] = digest
        return digest


class _S3Error(Exception):
    def __init__(self, status, code, message=None, extra=()):
        Exception.__init__(self, code)
        self.status = status
        self.code = code
        self.message = message if message is not None else S3_MESSAGES.get(code, code)
        self.extra = extra


def _utc(t):
    return datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc)


def _amz_date(t):
    return _utc(t).strftime("%Y%m%dT%H%M%SZ")


def _iso_expiration(t):
    return _utc(t).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _parse_amz_date(text):
    dt = datetime.datetime.strptime(text, "%Y%m%dT%H%M%SZ")
    return (dt - datetime.datetime(1970, 1, 1)).total_seconds()


def _parse_iso(text):
    m = re.match(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?Z\Z", text)
    if not m:
        raise ValueError("expiration is not ISO-8601 UTC")
    dt = datetime.datetime(*[int(x) for x in m.groups()])
    return (dt - datetime.datetime(1970, 1, 1)).total_seconds()


def _quote(text):
    return urllib.parse.quote(text, safe="-_.~")


def _canonical_query(pairs):
    return "&".join("%s=%s" % (_quote(k), _quote(v)) for k, v in sorted(pairs)
                    if k != "X-Amz-Signature")


_DISPOSITION_PARAM = re.compile(r';\s*([A-Za-z0-9_*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))')


def _parse_part_headers(block):
    """(name, filename, content_type) from a part's header block (bytes)."""
    name = filename = ctype = None
    for line in block.decode("utf-8", "replace").split("\r\n"):
        hname, sep, value = line.partition(":")
        if not sep:
            raise _S3Error(400, "MalformedPOSTRequest")
        hname = hname.strip().lower()
        if hname == "content-disposition":
            kind, _, params = value.strip().partition(";")
            if kind.strip().lower() != "form-data":
                raise _S3Error(400, "MalformedPOSTRequest")
            for m in _DISPOSITION_PARAM.finditer(";" + params):
                pname = m.group(1).lower()
                pval = m.group(2) if m.group(2) is not None else m.group(3)
                if pname == "name":
                    name = pval
                elif pname == "filename":
                    filename = pval
        elif hname == "content-type":
            ctype = value.strip()
    if name is None:
        raise _S3Error(400, "MalformedPOSTRequest")
    return name, filename, ctype


class ObjectStore(object):
    """An S3-like store on a LoopbackServer; see the module docstring.

    root_dir   where object files and upload temporaries go (created).
    tls        serve HTTPS with the test CA (conformance/ca/).
    seed       seeds fault probabilities and nothing else.
    fsync      fsync each upload before its rename (off: tests are faster and
               the store's own crash safety is not under test).
    """

    def __init__(self, root_dir, tls=False, seed=0, fsync=False, name="store"):
        self.root_dir = os.path.abspath(root_dir)
        self._objects_dir = os.path.join(self.root_dir, "objects")
        self._tmp_dir = os.path.join(self.root_dir, "tmp")
        os.makedirs(self._objects_dir, exist_ok=True)
        os.makedirs(self._tmp_dir, exist_ok=True)
        self.fsync = fsync
        self._lock = threading.RLock()
        self._secret_key = "CANARYSECRET" + _secrets.token_hex(20)
        self.access_key_id = "AKIA" + _secrets.token_hex(8).upper()
        self._tokens = {}            # token -> monotonic expiry or None
        self._issued = [self._secret_key]
        self._objects = {}
        self._commit_log = []
        self._commit_seq = 0
        self._file_seq = 0
        self.clock_offset_s = 0.0
        self.server = LoopbackServer(name, tls=tls, seed=seed, secret_values=self.secrets,
                                     server_header="AmazonS3")
        self.server.route("POST", UPLOAD_PATH, self._handle_post, raw=True, key_in_body=True)
        self.server.route("GET", "/*", self._handle_get, raw=True, key=lambda req: req.path[1:])
        self.server.route("*", "/*", self._handle_other, raw=True, key=lambda req: req.path[1:])
        self.origin = self.server.origin

    # ------------------------------------------------------------ credentials
    def now(self):
        """The store's wall clock (epoch seconds), moved by advance_clock()."""
        return time.time() + self.clock_offset_s

    def advance_clock(self, seconds):
        """Move the store's wall clock forward (expire URLs and policies)."""
        self.clock_offset_s += seconds

    def new_token(self):
        """A fresh session token; begins with CANARY so leaks can be grepped."""
        token = "CANARY" + _secrets.token_hex(20)
        with self._lock:
            self._tokens[token] = None
            self._issued.append(token)
        return token

    def expire_token(self, token, at=None):
        """From monotonic time `at` (default now) the token is refused (ExpiredToken)."""
        with self._lock:
            self._tokens[token] = time.monotonic() if at is None else at

    def token_seq(self, token):
        """1 for the first token new_token() issued, 2 for the next...; None if unknown.
        Transcripts record this number, never the token itself."""
        with self._lock:
            tokens = [t for t in self._tokens]
        return tokens.index(token) + 1 if token in tokens else None

    def secrets(self):
        """Every token, signature, policy and key the store ever issued."""
        with self._lock:
            return list(self._issued)

    def _remember(self, *values):
        with self._lock:
            self._issued.extend(values)

    def _sign(self, text):
        return hmac.new(self._secret_key.encode(), text.encode("utf-8"), hashlib.sha256).hexdigest()

    def _credential(self, t):
        return "%s/%s/%s/s3/aws4_request" % (self.access_key_id, _amz_date(t)[:8], REGION)

    def url_for(self, key):
        """The object's URL without any query (it answers 403)."""
        return self.origin + "/" + urllib.parse.quote(key, safe="/~")

    def presign_get(self, key, token, expires_in_s=900, issued_at=None, method="GET"):
        """A presigned URL for key, carrying token; valid for expires_in_s."""
        t = self.now() if issued_at is None else issued_at
        params = [
            ("X-Amz-Algorithm", ALGORITHM),
            ("X-Amz-Credential", self._credential(t)),
            ("X-Amz-Date", _amz_date(t)),
            ("X-Amz-Expires", str(int(expires_in_s))),
            ("X-Amz-SignedHeaders", "host"),
            ("X-Amz-Security-Token", token),
        ]
        signature = self._sign("%s\n/%s\n%s" % (method, key, _canonical_query(params)))
        params.append(("X-Amz-Signature", signature))
        self._remember(signature)
        return self.url_for(key) + "?" + "&".join("%s=%s" % (k, _quote(v)) for k, v in params)

    def presign_post(self, key_prefix, token, expires_in_s=900, max_bytes=DEFAULT_MAX_BYTES,
                     min_bytes=0, issued_at=None, key_field=None):
        """S3-style presigned POST: {"url", "fields", "key_prefix"}.

        The policy allows keys starting with key_prefix and file sizes in
        [min_bytes, max_bytes]. ``key_field`` adds a ``key`` field first
        (as boto3 does); by default there is none and the node adds it.
        """
        t = self.now() if issued_at is None else issued_at
        fields = {}
        if key_field is not None:
            fields["key"] = key_field
        fields.update([
            ("x-amz-algorithm", ALGORITHM),
            ("x-amz-credential", self._credential(t)),
            ("x-amz-date", _amz_date(t)),
            ("x-amz-security-token", token),
        ])
        conditions = [["starts-with", "$key", key_prefix],
                      ["content-length-range", int(min_bytes), int(max_bytes)]]
        conditions += [{k: v} for k, v in fields.items() if k != "key"]
        policy = {"expiration": _iso_expiration(t + expires_in_s), "conditions": conditions}
        policy_b64 = base64.b64encode(json.dumps(policy, separators=(",", ":")).encode()).decode()
        signature = self._sign(policy_b64)
        fields["policy"] = policy_b64
        fields["x-amz-signature"] = signature
        self._remember(policy_b64, signature)
        return {"url": self.origin + UPLOAD_PATH, "fields": fields, "key_prefix": key_prefix}

    def _token_state(self, token):
        with self._lock:
            if token not in self._tokens:
                return "unknown"
            at = self._tokens[token]
        if at is not None and time.monotonic() >= at:
            return "expired"
        return "ok"

    # ------------------------------------------------------------ objects
    def _new_object_path(self, key):
        with self._lock:
            self._file_seq += 1
            n = self._file_seq
        return os.path.join(self._objects_dir, "%06d-%s" % (
            n, hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:24]))

    def _commit(self, key, sha, size, path, origin, **timeline):
        with self._lock:
            self._commit_seq += 1
            obj = Obj(key, sha, size, path, self._commit_seq, time.monotonic(), origin, **timeline)
            self._objects[key] = obj
            self._commit_log.append(obj)
        self.server._event("commit", timeline.get("exchange_seq"), None, None, key, size, sha)
        return obj

    def put(self, key, source, content_type="application/octet-stream"):
        """Seed an object without HTTP from bytes or a file path; (sha256, size)."""
        final = self._new_object_path(key)
        tmp = final + ".part"
        h = hashlib.sha256()
        size = 0
        with open(tmp, "wb") as out:
            if isinstance(source, (bytes, bytearray, memoryview)):
                h.update(source)
                out.write(source)
                size = len(source)
            else:
                buf = bytearray(IO_BLOCK_BYTES)
                mv = memoryview(buf)
                with open(os.fspath(source), "rb", buffering=0) as f:
                    while True:
                        n = f.readinto(buf)
                        if not n:
                            break
                        h.update(mv[:n])
                        out.write(mv[:n])
                        size += n
        os.rename(tmp, final)
        obj = self._commit(key, h.hexdigest(), size, final, "put", content_type=content_type)
        return obj.sha256, obj.size

    def put_json(self, key, document):
        """Seed a JSON document (a manifest, say); serve it with presign_get."""
        return self.put(key, json.dumps(document).encode("utf-8"), content_type="application/json")

    def serve_generated(self, key, size, seed):
        """Register a virtual object of `size` bytes from `seed`; (sha256, size)."""
        source = GeneratedSource(size, seed)
        obj = self._commit(key, source.sha256(), size, None, "generated", generator_seed=seed)
        return obj.sha256, size

    def generated_bytes(self, size, seed):
        """Iterate the bytes serve_generated(key, size, seed) would serve."""
        return GeneratedSource(size, seed).iter_blocks(0, size, GENERATED_BLOCK_BYTES)

    def objects(self):
        """{key: Obj} of the current object at every key."""
        with self._lock:
            return dict(self._objects)

    def commit_log(self):
        """Every commit in order, overwritten ones included."""
        with self._lock:
            return list(self._commit_log)

    def delete(self, key):
        with self._lock:
            self._objects.pop(key, None)

    def _source(self, obj):
        if obj.path is None:
            return GeneratedSource(obj.size, obj.generator_seed)
        return FileSource(obj.path, obj.size)

    def read_hash(self, key):
        """(sha256, size) computed by streaming the stored bytes (KeyError if absent)."""
        obj = self.objects()[key]
        h = hashlib.sha256()
        size = 0
        for block in self._source(obj).iter_blocks(0, obj.size, IO_BLOCK_BYTES):
            h.update(block)
            size += len(block)
        return h.hexdigest(), size

    def open_object(self, key):
        """A binary file object on the stored bytes (seeded and uploaded objects)."""
        obj = self.objects()[key]
        if obj.path is None:
            raise ValueError("generated object %r has no file; use generated_bytes()" % key)
        return open(obj.path, "rb")

    # ------------------------------------------------------------ server passthrough
    def add_fault(self, fault, match=None):
        return self.server.add_fault(fault, match)

    def clear_faults(self):
        self.server.clear_faults()

    @property
    def transcript(self):
        return self.server.transcript

    @property
    def events(self):
        return self.server.events

    @property
    def connections(self):
        return self.server.connections

    @property
    def max_concurrency(self):
        return self.server.max_concurrency

    @property
    def errors(self):
        return self.server.errors

    def wait_for(self, predicate, timeout, since=0):
        return self.server.wait_for(predicate, timeout, since)

    def wait_until(self, condition, timeout):
        return self.server.wait_until(condition, timeout)

    def close(self):
        self.server.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ handlers
    def _error(self, ctx, err, close=False):
        seq = ctx.exchange.seq
        body = s3_error_xml(err.code, err.message, self.server.request_id(seq),
                            self.server.host_id(seq), err.extra)
        ctx.respond(err.status, self._amz_headers(ctx, "application/xml"), body=body,
                    close=close, error_code=err.code)

    def _amz_headers(self, ctx, content_type=None):
        seq = ctx.exchange.seq
        headers = [("x-amz-request-id", self.server.request_id(seq)),
                   ("x-amz-id-2", self.server.host_id(seq))]
        if content_type:
            headers.append(("Content-Type", content_type))
        return headers

    def _handle_other(self, ctx):
        ctx.body.drain()
        ctx.body_finished()
        self._error(ctx, _S3Error(405, "MethodNotAllowed", extra=(
            ("Method", ctx.request.method), ("ResourceType", "OBJECT"))))

    def _handle_get(self, ctx):
        ctx.body.drain()
        ctx.body_finished()
        req = ctx.request
        key = req.path[1:]
        if req.has_query:
            ctx.note(token_seq=self.token_seq(req.query.get("X-Amz-Security-Token")))
        try:
            self._check_presigned_get(req, key)
            obj = self.objects().get(key)
            if obj is None:
                raise _S3Error(404, "NoSuchKey", extra=(("Key", key),))
        except _S3Error as err:
            self._error(ctx, err)
            return
        headers = self._amz_headers(ctx, obj.content_type)
        headers += [("ETag", obj.etag), ("Last-Modified", _http_date_of(obj)),
                    ("Accept-Ranges", "none")]
        ctx.respond(200, headers, source=self._source(obj))

    def _check_presigned_get(self, req, key):
        if not req.has_query:
            raise _S3Error(403, "AccessDenied")
        q = req.query
        needed = ("X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-Date",
                  "X-Amz-SignedHeaders", "X-Amz-Expires")
        if any(name not in q for name in needed):
            raise _S3Error(400, "AuthorizationQueryParametersError")
        if q["X-Amz-Algorithm"] != ALGORITHM:
            raise _S3Error(400, "AuthorizationQueryParametersError",
                           'X-Amz-Algorithm only supports "%s"' % ALGORITHM)
        if q["X-Amz-Credential"].split("/", 1)[0] != self.access_key_id:
            raise _S3Error(403, "InvalidAccessKeyId")
        pairs = [(k, v) for k, v in req.query_list]
        expected = self._sign("%s\n/%s\n%s" % ("GET", key, _canonical_query(pairs)))
        if not hmac.compare_digest(expected, q["X-Amz-Signature"]):
            raise _S3Error(403, "SignatureDoesNotMatch")
        try:
            issued = _parse_amz_date(q["X-Amz-Date"])
            expires = int(q["X-Amz-Expires"])
        except ValueError:
            raise _S3Error(400, "AuthorizationQueryParametersError")
        now = self.now()
        if issued - now > MAX_CLOCK_SKEW_S:
            raise _S3Error(403, "AccessDenied", "Request is not valid yet")
        if now > issued + expires:
            raise _S3Error(403, "AccessDenied", "Request has expired", extra=(
                ("X-Amz-Expires", str(expires)),
                ("Expires", _iso_expiration(issued + expires)[:-5] + "Z"),
                ("ServerTime", _iso_expiration(now)[:-5] + "Z")))
        self._check_token(q.get("X-Amz-Security-Token"))

    def _check_token(self, token):
        if token is None:
            raise _S3Error(403, "AccessDenied")
        state = self._token_state(token)
        if state == "unknown":
            raise _S3Error(400, "InvalidToken")
        if state == "expired":
            raise _S3Error(400, "ExpiredToken")

    # ------------------------------------------------------------ POST upload
    def _handle_post(self, ctx):
        req = ctx.request
        if req.chunked or req.content_length is None:
            # The contract forbids chunked uploads; S3 refuses them like this.
            self._error(ctx, _S3Error(411, "MissingContentLength"), close=True)
            ctx.linger()
            return
        ctype = req.headers.get("content-type", "")
        m = re.match(r'(?i)^\s*multipart/form-data\s*;(?:.*;)?\s*boundary=(?:"([^"]+)"|([^;\s]+))', ctype)
        if not m:
            ctx.body.drain()
            ctx.body_finished()
            self._error(ctx, _S3Error(412, "PreconditionFailed", extra=(
                ("Condition", "Bucket POST must be of the enclosure-type multipart/form-data"),)))
            return
        boundary = (m.group(1) or m.group(2)).encode("latin-1")
        upload = _Upload(self, ctx, boundary)
        try:
            upload.run()
        finally:
            upload.cleanup()

    def _validate_fields(self, fields, names_lower):
        """Check everything knowable before the file: returns policy limits."""
        def field_(name):
            return fields.get(name)
        policy_b64 = field_("policy")
        if policy_b64 is None:
            raise _S3Error(403, "AccessDenied")
        for name in ("key", "x-amz-signature", "x-amz-algorithm", "x-amz-credential", "x-amz-date"):
            if field_(name) is None:
                raise _S3Error(400, "InvalidArgument",
                               "Bucket POST must contain a field named '%s'.  If it is specified, "
                               "please check the order of the fields." % name,
                               extra=(("ArgumentName", name), ("ArgumentValue", "")))
        if field_("x-amz-algorithm") != ALGORITHM:
            raise _S3Error(400, "InvalidArgument", "Unsupported algorithm",
                           extra=(("ArgumentName", "x-amz-algorithm"),))
        if field_("x-amz-credential").split("/", 1)[0] != self.access_key_id:
            raise _S3Error(403, "InvalidAccessKeyId")
        if not hmac.compare_digest(self._sign(policy_b64), field_("x-amz-signature")):
            raise _S3Error(403, "SignatureDoesNotMatch")
        self._check_token(field_("x-amz-security-token"))
        try:
            policy = json.loads(base64.b64decode(policy_b64, validate=True).decode("utf-8"))
            expiration = _parse_iso(policy["expiration"])
            conditions = policy["conditions"]
            if not isinstance(conditions, list):
                raise ValueError("conditions is not a list")
        except (ValueError, KeyError, TypeError) as e:
            raise _S3Error(400, "InvalidPolicyDocument", "Invalid Policy: %s" % e)
        if self.now() > expiration:
            raise _S3Error(403, "AccessDenied", "Invalid according to Policy: Policy expired.")
        covered = set(["policy", "x-amz-signature", "file"])
        size_range = None
        for cond in conditions:
            if isinstance(cond, dict) and len(cond) == 1:
                (name, value), = cond.items()
                op, name = "eq", "$" + name
            elif isinstance(cond, list) and len(cond) == 3:
                op, name, value = cond
                op = str(op).lower()
            else:
                raise _S3Error(400, "InvalidPolicyDocument", "Invalid Policy: bad condition")
            if op == "content-length-range":
                size_range = (int(name), int(value))
                continue
            fname = str(name).lstrip("$").lower()
            covered.add(fname)
            actual = fields.get(fname)
            ok = actual is not None and (actual == value if op == "eq" else
                                         op == "starts-with" and actual.startswith(value))
            if not ok:
                raise _S3Error(403, "AccessDenied", "Invalid according to Policy: Policy Condition "
                               "failed: %s" % json.dumps([op, name if str(name).startswith("$")
                                                          else "$" + str(name), value]))
        extra = [n for n in names_lower if n not in covered and not n.startswith("x-ignore-")]
        if extra:
            raise _S3Error(403, "AccessDenied", "Invalid according to Policy: Extra input fields: %s"
                           % ", ".join(extra))
        return size_range


def _http_date_of(obj):
    return email.utils.formatdate(time.time() - (time.monotonic() - obj.committed_at), usegmt=True)


class _Upload(object):
    """One presigned POST: streaming multipart parse, validation, commit."""

    def __init__(self, store, ctx, boundary):
        self.store = store
        self.ctx = ctx
        self.delim = b"\r\n--" + boundary
        self.tmp_path = None
        self.fd = None

    def cleanup(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.tmp_path is not None:
            try:
                os.unlink(self.tmp_path)
            except OSError:
                pass
            self.tmp_path = None

    def run(self):
        ctx = self.ctx
        store = self.store
        try:
            fields, names, file_part, leftover = self._read_fields()
        except _S3Error as err:
            ctx.body.drain()
            ctx.body_finished()
            store._error(ctx, err)
            return
        ctx.note(form_fields=names, token_seq=store.token_seq(fields.get("x-amz-security-token")))
        key = fields.get("key")
        if key is not None:
            ctx.set_key(key)
        if file_part is None:
            ctx.body.drain()
            ctx.body_finished()
            store._error(ctx, _S3Error(400, "InvalidArgument", "POST requires exactly one file upload "
                                       "per request.", extra=(("ArgumentName", "file"), ("ArgumentValue", "0"))))
            return
        ctx.note(file_name=file_part[1], file_content_type=file_part[2])
        # Everything but the size is checked before the file streams; a
        # refused upload is still read to its end, but never written.
        error = None
        size_range = None
        if not ctx.refused:
            try:
                size_range = store._validate_fields(fields, [n.lower() for n in names])
            except _S3Error as err:
                error = err
        max_bytes = size_range[1] if size_range else None
        store_it = error is None and not ctx.refused
        sha, size, after = self._stream_file(leftover, store_it, max_bytes)
        ctx.body_finished()
        ctx.note(file_bytes=size, fields_after_file=after)
        if ctx.refused or error is not None or size is None:
            self.cleanup()       # before answering: a client that got the answer sees no temp file
        if ctx.refused:
            ctx.respond(500)  # the fault's answer replaces this
            return
        if error is None and size is None:
            error = _S3Error(400, "MalformedPOSTRequest")
        if error is None and size_range is not None:
            lo, hi = size_range
            if size > hi:
                error = _S3Error(400, "EntityTooLarge", extra=(
                    ("ProposedSize", str(size)), ("MaxSizeAllowed", str(hi))))
            elif size < lo:
                error = _S3Error(400, "EntityTooSmall", extra=(
                    ("ProposedSize", str(size)), ("MinSizeAllowed", str(lo))))
        if error is not None:
            self.cleanup()
            store._error(ctx, error)
            return
        if store.fsync:
            os.fsync(self.fd)
        os.close(self.fd)
        self.fd = None
        final = store._new_object_path(key)
        os.rename(self.tmp_path, final)
        self.tmp_path = None
        ex = ctx.exchange
        obj = store._commit(key, sha, size, final, "upload", t_request=ex.t_start,
                            t_body_done=ex.t_body_done, exchange_seq=ex.seq)
        ctx.note(committed_seq=obj.seq)
        headers = store._amz_headers(ctx)
        headers += [("ETag", obj.etag), ("Location", store.url_for(key))]
        ctx.respond(204, headers)
        obj.t_response_sent = time.monotonic()

    def _read_fields(self):
        """Parse parts up to the file part's headers, reading in small blocks.

        Returns (fields {lower name: value}, names in order, file part
        (name, filename, content type) or None, bytes already read past the
        file part's headers).
        """
        ctx = self.ctx
        delim = self.delim
        data = bytearray(b"\r\n")    # so the first boundary reads as a delimiter
        buf = bytearray(FIELD_READ_BYTES)
        mv = memoryview(buf)
        pos = None
        fields = {}
        names = []

        def more():
            n = ctx.body.readinto(mv)
            if n == 0:
                raise _S3Error(400, "MalformedPOSTRequest")
            data.extend(mv[:n])
            if len(data) > MAX_PRE_DATA_BYTES + len(delim) + 4096:
                raise _S3Error(400, "MaxPostPreDataLengthExceeded")

        while pos is None:           # skip any preamble
            i = data.find(delim)
            if i >= 0:
                pos = i
            else:
                more()
        while True:
            while len(data) < pos + len(delim) + 2:
                more()
            after = pos + len(delim)
            tail = bytes(data[after:after + 2])
            if tail == b"--":
                return fields, names, None, b""
            if tail != b"\r\n":
                raise _S3Error(400, "MalformedPOSTRequest")
            while True:
                end = data.find(b"\r\n\r\n", after + 2)
                if end >= 0:
                    break
                more()
            name, filename, ctype = _parse_part_headers(bytes(data[after + 2:end]))
            value_start = end + 4
            if name.lower() == "file":
                return fields, names, (name, filename, ctype), bytes(data[value_start:])
            while True:
                nxt = data.find(delim, value_start)
                if nxt >= 0:
                    break
                more()
            lname = name.lower()
            if lname in fields:
                raise _S3Error(400, "InvalidArgument", "Field %s appears more than once" % name,
                               extra=(("ArgumentName", name),))
            fields[lname] = data[value_start:nxt].decode("utf-8", "replace")
            names.append(name)
            pos = nxt

    def _stream_file(self, leftover, store_it, max_bytes):
        """Stream the file part to a temp file, hashing; find the delimiter.

        Returns (sha256 hex, size, names of parts after the file) with size
        None when the body ended without the delimiter. Stops writing (but
        keeps counting) once the size exceeds max_bytes.
        """
        ctx = self.ctx
        delim = self.delim
        dlen = len(delim)
        block = IO_BLOCK_BYTES
        buf = bytearray(block + dlen + len(leftover))
        mv = memoryview(buf)
        h = hashlib.sha256()
        if store_it:
            self.tmp_path = os.path.join(self.store._tmp_dir, "upload-%d-%d.part" % (
                ctx.exchange.seq, os.getpid()))
            self.fd = os.open(self.tmp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        fd = self.fd
        size = 0
        writing = store_it
        carry = len(leftover)
        buf[:carry] = leftover
        found = -1
        while True:
            filled = carry
            if ctx.body.finished and carry == 0:
                break
            n = ctx.body.readinto_full(mv[carry:carry + block])
            filled = carry + n
            found = buf.find(delim, 0, filled)
            if found >= 0:
                safe = found
            elif n == 0:
                safe = filled           # body ended: no delimiter anywhere
            else:
                safe = max(0, filled - (dlen - 1))
            if safe:
                size += safe
                if writing and max_bytes is not None and size > max_bytes:
                    writing = False
                if writing:
                    chunk = mv[:safe]
                    h.update(chunk)
                    while chunk:
                        w = os.write(fd, chunk)
                        chunk = chunk[w:]
            if found >= 0 or n == 0:
                break
            buf[:filled - safe] = buf[safe:filled]
            carry = filled - safe
        if found < 0:
            ctx.body.drain()
            return None, None, []
        # What follows the file part: "--" (the end) or more parts S3 ignores.
        tail = bytearray(buf[found + dlen:filled])
        while len(tail) < 65536 and not ctx.body.finished:
            n = ctx.body.readinto(mv[:block])
            if not n:
                break
            tail += mv[:n]
        ctx.body.drain()
        after = [m.group(1).decode("utf-8", "replace")
                 for m in re.finditer(rb'form-data;[^\r\n]*?\bname="([^"]*)"', bytes(tail))]
        return h.hexdigest(), size, after
