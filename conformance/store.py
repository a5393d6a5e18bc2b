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

GCS-style V4 signed PUT (one create-only upload through a signed URL):

    url = store.sign_put("crawl-bucket", "runs/7/part-0003.ndjson",
                         [("Content-Type", "application/x-ndjson"),
                          ("x-goog-if-generation-match", "0"), ...])
    # PUT origin/crawl-bucket/runs/7/part-0003.ndjson?X-Goog-Algorithm=...
    store.objects()["crawl-bucket/runs/7/part-0003.ndjson"].generation   # 1
    store.revoke_signature(signature)   # later requests: 403 AccessDenied

* The URL carries the six X-Goog-* parameters in the order GCS's signers
  emit them; the signature is HMAC-SHA512(store secret, string-to-sign) in
  hex (GCS signs with RSA, which the standard library cannot; the canonical
  request and string-to-sign are built exactly as GCS V4 builds them).
* PUT /<bucket>/<object> is checked in this order, each refusal a GCS XML
  error document: the query (400 MalformedSecurityHeader), the date window
  (400 ExpiredToken), the signed headers present and no unsigned x-goog-*
  header (400 MalformedSecurityHeader), the signature recomputed from the
  request as received (403 SignatureDoesNotMatch), revocation (403
  AccessDenied), Content-Length present and not chunked (411
  MissingContentLength), x-goog-content-length-range (400 EntityTooLarge /
  EntityTooSmall). Each of these answers before any body byte is read. The
  body then streams to a temp file while hashed; a declared
  x-goog-content-sha256 or Content-MD5 must match (400 BadDigest);
  x-goog-if-generation-match is evaluated at commit, under the store lock
  (412 PreconditionFailed), so of two racing create-only PUTs exactly one
  commits. Success: 200 with ETag (quoted MD5), x-goog-generation,
  x-goog-hash, x-goog-stored-content-length. Generations count the commits
  of a key, from 1. A PUT without any X-Goog-* parameter keeps the S3 answer
  (405 MethodNotAllowed).
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
import xml.sax.saxutils
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

from conformance.servers import (
    IO_BLOCK_BYTES, FileSource, LoopbackServer, s3_error_xml, S3_MESSAGES,
)

__all__ = ["ObjectStore", "Obj", "GeneratedSource", "UPLOAD_PATH", "gcs_error_xml",
           "GCS_SIGNER_EMAIL", "GCS_QUERY_PARAMS"]

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
# S3 refuses a presigned URL dated this far in the future ("not valid yet");
# the GCS-style PUT uses the same window.
MAX_CLOCK_SKEW_S = 15 * 60

# ---- GCS-style V4 signed PUT
GCS_ALGORITHM = "GOOG4-RSA-SHA256"
# The fake service account named in every signed URL's credential. Not a
# secret: GCS puts the signer's e-mail in the URL in clear.
GCS_SIGNER_EMAIL = "crawler-signer@conformance.iam.gserviceaccount.com"
# Credential scope after the date: GCS V4 always uses region "auto".
GCS_SCOPE_TAIL = "auto/storage/goog4_request"
# The query of a signed URL, in the order GCS's own signers emit it. A node
# must send the query exactly as the URL gave it; the store checks presence.
GCS_QUERY_PARAMS = ("X-Goog-Algorithm", "X-Goog-Credential", "X-Goog-Date",
                    "X-Goog-Expires", "X-Goog-SignedHeaders", "X-Goog-Signature")
# A signed URL signs no body: its canonical request ends with this literal.
GCS_PAYLOAD_HASH = "UNSIGNED-PAYLOAD"
# GCS refuses V4 signed URLs valid for longer than 7 days (604800 s).
GCS_MAX_EXPIRES_S = 7 * 24 * 3600
# Header names whose values GCS reads as upload metadata.
GCS_META_PREFIX = "x-goog-meta-"
# What GCS's upload front end sends on XML API answers.
GCS_XML_CONTENT_TYPE = "application/xml; charset=UTF-8"
GCS_SERVER_HEADER = "UploadServer"
# A successful XML PUT answers an empty body labelled like this.
GCS_EMPTY_CONTENT_TYPE = "text/html; charset=UTF-8"

# Default texts of the GCS XML error codes the PUT route uses. Confirmed from
# real GCS answers quoted in public bug reports: SignatureDoesNotMatch (V4:
# Message "Access denied.", the sentence below as Details, then StringToSign
# and CanonicalRequest), ExpiredToken (400, "The provided token has
# expired."), MalformedSecurityHeader ("Your request has a malformed
# header.", with ParameterName and Details). The others are the texts GCS's
# XML status page lists or, where not confirmed, S3's wording.
GCS_MESSAGES = {
    "AccessDenied": "Access denied.",
    "BadDigest": "The Content-MD5 or x-goog-hash you specified did not match what we received.",
    "EntityTooLarge": "Your proposed upload exceeds the maximum allowed object size.",
    "EntityTooSmall": "Your proposed upload is smaller than the minimum allowed object size.",
    "ExpiredToken": "The provided token has expired.",
    "InvalidArgument": "Invalid argument.",
    "MalformedSecurityHeader": "Your request has a malformed header.",
    "MissingContentLength": "You must provide the Content-Length HTTP header.",
    "PreconditionFailed": "At least one of the pre-conditions you specified did not hold.",
    "SignatureDoesNotMatch": "Access denied.",
}
GCS_SIGNATURE_DETAILS = ("The request signature we calculated does not match the signature you "
                         "provided. Check your Google secret key and signing method.")

# An HTTP header name (RFC 9110 token).
_TOKEN_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")

_generated_hash_cache = {}
_generated_cache_lock = threading.Lock()


@dataclass
class Obj:
    """A committed object. Times are time.monotonic(); None when not applicable.

    origin: "put" (seeded by the harness), "generated" (virtual), "upload"
    (a POST), "gcs-put" (a signed PUT). t_request/t_body_done/t_response_sent
    come from the upload's exchange; t_response_sent stays None when the
    answer never went out. generation counts the commits of this key, from
    1 (GCS's x-goog-if-generation-match compares against it); metadata holds
    a signed PUT's x-goog-meta-* headers (names lowercased, prefix removed);
    md5 (hex) is computed for signed PUTs only, whose ETag GCS derives from it.
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
    generation: Optional[int] = None
    metadata: Dict[str, str] = field(default_factory=dict)
    md5: Optional[str] = None

    @property
    def etag(self):
        return '"%s"' % (self.md5 if self.md5 else self.sha256[:32])


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


class _GcsError(Exception):
    """A refusal of the signed-PUT route, answered as a GCS XML error document."""

    def __init__(self, status, code, details=None, parameter=None, extra=(), message=None):
        Exception.__init__(self, code)
        self.status = status
        self.code = code
        self.message = message if message is not None else GCS_MESSAGES.get(code, code)
        self.details = details
        self.parameter = parameter
        self.extra = extra


def gcs_error_xml(code, message=None, details=None, parameter=None, extra=()):
    """GCS's XML API error document: Code, Message, [ParameterName], [Details], extra.

    The element order is the one GCS sends (MalformedSecurityHeader names the
    parameter before the details; SignatureDoesNotMatch appends StringToSign
    and CanonicalRequest). GCS's declaration uses single quotes, S3's double:
    a client that string-matches one provider's errors will notice.
    """
    if message is None:
        message = GCS_MESSAGES.get(code, code)
    esc = xml.sax.saxutils.escape
    parts = ["<?xml version='1.0' encoding='UTF-8'?><Error><Code>", esc(code),
             "</Code><Message>", esc(message), "</Message>"]
    if parameter is not None:
        parts += ["<ParameterName>", esc(parameter), "</ParameterName>"]
    if details is not None:
        parts += ["<Details>", esc(details), "</Details>"]
    for name, value in extra:
        parts.append("<%s>%s</%s>" % (name, esc(value), name))
    parts.append("</Error>")
    return "".join(parts).encode("utf-8")


_HEADER_SPACES = re.compile(r"[ \t]+")


def _goog4_header_value(values):
    """Canonical value of one signed header: each value trimmed, runs of
    blanks made one space, repeated headers joined with commas (GCS V4)."""
    return ",".join(_HEADER_SPACES.sub(" ", v.strip(" \t")) for v in values)


def _goog4_canonical_request(method, canonical_uri, query_pairs, header_pairs, signed_names):
    """GCS V4 canonical request: method, URI, query, headers, signed names, payload.

    query_pairs are decoded (name, value) pairs; every one but the signature
    is RFC 3986 encoded, then sorted. header_pairs are (lowercase name,
    canonical value), sorted by name.
    """
    query = "&".join(sorted("%s=%s" % (_quote(k), _quote(v)) for k, v in query_pairs
                            if k != "X-Goog-Signature"))
    headers = "".join("%s:%s\n" % (name, value) for name, value in header_pairs)
    return "\n".join([method, canonical_uri, query, headers, signed_names, GCS_PAYLOAD_HASH])


def _goog4_string_to_sign(date, scope, canonical_request):
    return "\n".join([GCS_ALGORITHM, date, scope,
                      hashlib.sha256(canonical_request.encode("utf-8")).hexdigest()])


def _quote_path(text):
    """RFC 3986 encoding of a URL path, '/' kept (as GCS's signers encode object names)."""
    return urllib.parse.quote(text, safe="/-_.~")


@dataclass(frozen=True)
class _SignedPut:
    """What sign_put() signed, kept so a refusal can say which header differs."""
    seq: int
    key: str
    headers: Tuple[Tuple[str, str], ...]    # (lowercase name, canonical value), host first
    issued_at: float
    expires_in_s: int


class ObjectStore(object):
    """An S3-like store on a LoopbackServer; see the module docstring.

    root_dir   where object files and upload temporaries go (created).
    tls        serve HTTPS with the test CA (conformance/ca/).
    seed       seeds fault probabilities and nothing else.
    fsync      fsync each upload before its rename (off: tests are faster and
               the store's own crash safety is not under test).
    cert_chain (certificate, key) files to serve instead of the test CA's.
    """

    def __init__(self, root_dir, tls=False, seed=0, fsync=False, name="store", cert_chain=None):
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
        self._generations = {}       # key -> commits so far (GCS generation of the last)
        self._signed_puts = {}       # signature -> _SignedPut
        self._revoked = set()        # signatures refused by revoke_signature()
        self._file_seq = 0
        self.clock_offset_s = 0.0
        # Signed PUTs, for checks: the raw request target of each (a secret:
        # the transcript masks it, this keeps it for byte-exact comparison),
        # a hook called as each PUT's head arrives (its value kept in
        # put_observed), and the success status to answer after a commit.
        self.put_targets = []
        self.on_put = None
        self.put_observed = []
        self.put_success_status = 200
        self.server = LoopbackServer(name, tls=tls, seed=seed, secret_values=self.secrets,
                                     server_header="AmazonS3", cert_chain=cert_chain)
        self.server.route("POST", UPLOAD_PATH, self._handle_post, raw=True, key_in_body=True)
        self.server.route("GET", "/*", self._handle_get, raw=True, key=lambda req: req.path[1:])
        # Before the catch-all: the first matching route wins. Key "bucket/object".
        self.server.route("PUT", "/*", self._handle_put, raw=True, key=lambda req: req.path[1:])
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

    def sign_put(self, bucket, object_name, headers, expires_in_s=900, issued_at=None):
        """A GCS-style V4 signed URL for one PUT of bucket/object_name.

        headers: ordered (name, value) pairs the client must send, all signed
        with ``host`` (the origin's host:port, as a client sends it). Returns
        origin/bucket/object?X-Goog-Algorithm=..&X-Goog-Credential=..
        &X-Goog-Date=..&X-Goog-Expires=..&X-Goog-SignedHeaders=..
        &X-Goog-Signature=<128 hex>, values encoded as GCS encodes them
        ('/' as %2F, ';' as %3B, '@' as %40). issued_at (epoch seconds,
        default now()) dates URLs in the past or future. The signature joins
        secrets() and is remembered with what it signed.
        """
        if not bucket or "/" in bucket or not object_name:
            raise ValueError("sign_put needs a bucket without '/' and a non-empty object name")
        expires_in_s = int(expires_in_s)
        if not 1 <= expires_in_s <= GCS_MAX_EXPIRES_S:
            raise ValueError("expires_in_s must be within [1, %d] (GCS's V4 limit)" % GCS_MAX_EXPIRES_S)
        signed = {"host": urllib.parse.urlsplit(self.origin).netloc}
        for name, value in headers:
            lname = name.lower()
            if lname in signed or not _TOKEN_NAME.match(name):
                raise ValueError("sign_put: header %r is repeated, reserved (host) or not a token" % name)
            if any(c in value for c in "\r\n") or not value.isascii():
                raise ValueError("sign_put: the value of header %r cannot be sent as-is" % name)
            signed[lname] = _goog4_header_value([value])
        names = sorted(signed)
        t = self.now() if issued_at is None else issued_at
        date = _amz_date(t)
        scope = "%s/%s" % (date[:8], GCS_SCOPE_TAIL)
        params = [
            ("X-Goog-Algorithm", GCS_ALGORITHM),
            ("X-Goog-Credential", "%s/%s" % (GCS_SIGNER_EMAIL, scope)),
            ("X-Goog-Date", date),
            ("X-Goog-Expires", str(expires_in_s)),
            ("X-Goog-SignedHeaders", ";".join(names)),
        ]
        canonical_uri = "/%s/%s" % (_quote_path(bucket), _quote_path(object_name))
        canonical = _goog4_canonical_request("PUT", canonical_uri, params,
                                             [(n, signed[n]) for n in names], ";".join(names))
        signature = self._sign_goog4(_goog4_string_to_sign(date, scope, canonical))
        params.append(("X-Goog-Signature", signature))
        self._remember(signature)
        with self._lock:
            record = _SignedPut(len(self._signed_puts) + 1, "%s/%s" % (bucket, object_name),
                                tuple((n, signed[n]) for n in names), t, expires_in_s)
            self._signed_puts[signature] = record
        return self.origin + canonical_uri + "?" + "&".join("%s=%s" % (k, _quote(v)) for k, v in params)

    def revoke_signature(self, signature):
        """From now on, a PUT carrying this signature is refused (403 AccessDenied),
        as GCS refuses a URL signed by a key since deleted."""
        with self._lock:
            self._revoked.add(signature)

    def _sign_goog4(self, string_to_sign):
        # HMAC-SHA512 stands in for GCS's RSA-SHA256 (no RSA in the standard
        # library): 128 lowercase hex digits, which the crawler's validator accepts.
        return hmac.new(self._secret_key.encode(), string_to_sign.encode("utf-8"),
                        hashlib.sha512).hexdigest()

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

    def _commit(self, key, sha, size, path, origin, if_generation=None, **fields):
        """Make `key` name the new object; None when if_generation does not hold.

        if_generation is GCS's x-goog-if-generation-match: 0 means "no live
        object", N means "the live object's generation is N". It is checked
        and the object published under one lock, so two racing create-only
        uploads cannot both succeed. The commit event is emitted outside the
        store's lock (the server's lock is taken there; never nest them).
        """
        with self._lock:
            if if_generation is not None:
                live = self._objects.get(key)
                if (live.generation if live is not None else 0) != if_generation:
                    return None
            self._commit_seq += 1
            generation = self._generations.get(key, 0) + 1
            self._generations[key] = generation
            obj = Obj(key, sha, size, path, self._commit_seq, time.monotonic(), origin,
                      generation=generation, **fields)
            self._objects[key] = obj
            self._commit_log.append(obj)
        self.server._event("commit", fields.get("exchange_seq"), None, None, key, size, sha)
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

    # ------------------------------------------------------------ GCS signed PUT
    def _handle_put(self, ctx):
        """PUT /<bucket>/<object> through a sign_put() URL; see the module docstring.

        Everything knowable from the head is checked before one body byte is
        read, so a refused upload costs no body; the precondition is checked
        at commit, where it cannot race.
        """
        req = ctx.request
        with self._lock:
            self.put_targets.append(req.target)
        if self.on_put is not None:
            self.put_observed.append(self.on_put())
        if not any(name.lower().startswith("x-goog-") for name, _ in req.query_list):
            # Not a signed URL at all: the store's S3 answer to a bare PUT.
            self._handle_other(ctx)
            return
        key = req.path[1:]
        ctx.note(put_key=key, declared_length=req.content_length, signed=False)
        try:
            self._verify_signed_put(ctx)
            ctx.note(signed=True)
            if req.chunked or req.content_length is None:
                # The contract forbids chunked uploads. Real GCS accepts them on
                # the XML API; the store answers what GCS answers a PUT whose
                # length it needs and cannot know.
                raise _GcsError(411, "MissingContentLength")
            terms = self._put_terms(req)
        except _GcsError as err:
            # After a 411 the framing is unknown: bytes that follow are not a request.
            self._gcs_refuse_early(ctx, err, close=err.status == 411)
            return
        ctx.note(precondition=terms["if_generation"])
        if ctx.refused:
            # A fault answers instead: read the body, store nothing.
            ctx.body.drain()
            ctx.body_finished()
            ctx.respond(500)  # replaced by the fault's answer
            return
        tmp = None
        obj = error = None
        try:
            tmp, sha, md5 = self._receive_put(ctx, req.content_length)
            ctx.body_finished()
            if not ctx.refused:
                error = self._check_digests(terms, sha, md5)
            if not ctx.refused and error is None:
                final = self._new_object_path(key)
                os.rename(tmp, final)
                tmp = final          # removed below unless committed
                ex = ctx.exchange
                obj = self._commit(key, sha, req.content_length, final, "gcs-put",
                                   if_generation=terms["if_generation"],
                                   content_type=terms["content_type"], metadata=terms["metadata"],
                                   md5=md5, t_request=ex.t_start, t_body_done=ex.t_body_done,
                                   exchange_seq=ex.seq)
                if obj is None:
                    error = _GcsError(412, "PreconditionFailed", details=(
                        "x-goog-if-generation-match: %d does not match the live object's "
                        "generation." % terms["if_generation"]))
                else:
                    tmp = None
        finally:
            # Before any answer: a client that has the answer finds no stray file.
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
        if ctx.refused:
            ctx.respond(500)  # replaced by the fault's answer
            return
        if error is not None:
            self._gcs_error(ctx, error)
            return
        ctx.note(committed_seq=obj.seq, generation=obj.generation)
        headers = self._goog_headers(ctx, GCS_EMPTY_CONTENT_TYPE)
        headers += [
            ("ETag", obj.etag),
            ("x-goog-generation", str(obj.generation)),
            ("x-goog-metageneration", "1"),
            # GCS also reports crc32c; the standard library has no CRC-32C, and
            # a wrong checksum is worse than an absent one.
            ("x-goog-hash", "md5=" + base64.b64encode(bytes.fromhex(md5)).decode()),
            ("x-goog-stored-content-length", str(obj.size)),
            ("x-goog-stored-content-encoding", "identity"),
        ]
        ctx.respond(self.put_success_status, headers)
        obj.t_response_sent = time.monotonic()

    def _verify_signed_put(self, ctx):
        """The query, the date window, the signed headers and the signature.

        The signature is recomputed from the request as received: its method,
        raw path (the node must send the path as the URL gave it), decoded
        query, and the values of the headers it names (host as received).
        """
        req = ctx.request
        q = req.query
        for name in GCS_QUERY_PARAMS:
            if not q.get(name):
                raise _GcsError(400, "MalformedSecurityHeader", parameter=name,
                                details="Missing %s parameter in the query string." % name)
        signature = q["X-Goog-Signature"]
        with self._lock:
            record = self._signed_puts.get(signature)
        ctx.note(signature_known=record is not None, signed_url_seq=record.seq if record else None)
        if q["X-Goog-Algorithm"] != GCS_ALGORITHM:
            raise _GcsError(400, "MalformedSecurityHeader", parameter="X-Goog-Algorithm",
                            details="Unsupported algorithm; expected %s." % GCS_ALGORITHM)
        email, _, scope = q["X-Goog-Credential"].partition("/")
        date = q["X-Goog-Date"]
        try:
            issued = _parse_amz_date(date)
        except ValueError:
            raise _GcsError(400, "MalformedSecurityHeader", parameter="X-Goog-Date",
                            details="Invalid X-Goog-Date; expected YYYYMMDD'T'HHMMSS'Z'.")
        if not email or scope != "%s/%s" % (date[:8], GCS_SCOPE_TAIL):
            raise _GcsError(400, "MalformedSecurityHeader", parameter="X-Goog-Credential",
                            details="Invalid credential scope; expected EMAIL/%s/%s."
                            % (date[:8], GCS_SCOPE_TAIL))
        expires = q["X-Goog-Expires"]
        if not expires.isdigit() or not 1 <= int(expires) <= GCS_MAX_EXPIRES_S:
            raise _GcsError(400, "MalformedSecurityHeader", parameter="X-Goog-Expires",
                            details="X-Goog-Expires must be an integer within [1, %d]."
                            % GCS_MAX_EXPIRES_S)
        if not re.match(r"^[0-9a-f]+\Z", signature):
            raise _GcsError(400, "MalformedSecurityHeader", parameter="X-Goog-Signature",
                            details="Signature was not hex encoded.")
        now = self.now()
        if issued - now > MAX_CLOCK_SKEW_S:
            # Not confirmed against GCS: the code it uses for a URL dated in the
            # future was not found; the expired-URL answer is the likeliest.
            raise _GcsError(400, "ExpiredToken", details="Request is not valid yet: %s." % date)
        if now > issued + int(expires):
            raise _GcsError(400, "ExpiredToken", details="Request has expired: %d"
                            % int(issued + int(expires)))
        signed_names = q["X-Goog-SignedHeaders"].split(";")
        if "host" not in signed_names or signed_names != sorted(set(signed_names)) or \
                any(n != n.lower() or not n for n in signed_names):
            raise _GcsError(400, "MalformedSecurityHeader", parameter="X-Goog-SignedHeaders",
                            details="SignedHeaders must be lowercase, sorted, ';'-separated "
                            "and include host.")
        header_pairs = []
        for name in signed_names:
            values = req.headers.get_all(name)
            if not values:
                # Real GCS: MalformedSecurityHeader, not SignatureDoesNotMatch.
                raise _GcsError(400, "MalformedSecurityHeader", parameter=name,
                                details="Header was included in signedheaders, but not in the request.")
            header_pairs.append((name, _goog4_header_value(values)))
        unsigned = sorted(set(n.lower() for n, _ in req.headers
                              if n.lower().startswith("x-goog-") and n.lower() not in signed_names))
        if unsigned:
            raise _GcsError(400, "MalformedSecurityHeader", parameter=unsigned[0],
                            details="Header was included in the request, but not in signedheaders.")
        if record is not None:
            # Diagnosis only (names, never values): what differs from what was signed.
            signed_now = dict(header_pairs)
            ctx.note(header_mismatch=[n for n, v in record.headers if signed_now.get(n) != v]
                     + [n for n in signed_names if n not in dict(record.headers)])
        canonical = _goog4_canonical_request(req.method, req.raw_path, req.query_list,
                                             header_pairs, ";".join(signed_names))
        string_to_sign = _goog4_string_to_sign(date, scope, canonical)
        if not hmac.compare_digest(self._sign_goog4(string_to_sign), signature):
            raise _GcsError(403, "SignatureDoesNotMatch", details=GCS_SIGNATURE_DETAILS, extra=(
                ("StringToSign", string_to_sign), ("CanonicalRequest", canonical)))
        with self._lock:
            revoked = signature in self._revoked
        if revoked:
            raise _GcsError(403, "AccessDenied", details=(
                "%s does not have storage.objects.create access to the Google Cloud Storage "
                "object." % email))

    def _put_terms(self, req):
        """What the signed headers ask of the upload, checked against Content-Length."""
        terms = {"content_type": req.headers.get("content-type") or "application/octet-stream",
                 "metadata": {}, "if_generation": None, "sha256": None, "md5": None}
        for name, value in req.headers:
            lname = name.lower()
            if lname.startswith(GCS_META_PREFIX) and len(lname) > len(GCS_META_PREFIX):
                terms["metadata"][lname[len(GCS_META_PREFIX):]] = value
        match = req.headers.get("x-goog-if-generation-match")
        if match is not None:
            if not match.strip().isdigit():
                raise _GcsError(400, "InvalidArgument", parameter="x-goog-if-generation-match",
                                details="Invalid x-goog-if-generation-match: %s" % match)
            terms["if_generation"] = int(match)
        declared = req.headers.get("x-goog-content-sha256")
        if declared is not None and declared != GCS_PAYLOAD_HASH:
            if not re.match(r"^[0-9a-fA-F]{64}\Z", declared):
                raise _GcsError(400, "InvalidArgument", parameter="x-goog-content-sha256",
                                details="x-goog-content-sha256 is not a hex SHA-256.")
            terms["sha256"] = declared.lower()
        content_md5 = req.headers.get("content-md5")
        if content_md5 is not None:
            try:
                terms["md5"] = base64.b64decode(content_md5, validate=True).hex()
            except ValueError:
                raise _GcsError(400, "InvalidArgument", parameter="Content-MD5",
                                details="Content-MD5 is not base64.")
        length_range = req.headers.get("x-goog-content-length-range")
        if length_range is not None:
            m = re.match(r"^\s*(\d+)\s*,\s*(\d+)\s*\Z", length_range)
            if not m or int(m.group(1)) > int(m.group(2)):
                raise _GcsError(400, "InvalidArgument", parameter="x-goog-content-length-range",
                                details="Invalid x-goog-content-length-range: %s" % length_range)
            lo, hi = int(m.group(1)), int(m.group(2))
            # Not confirmed against GCS: its docs say an upload outside the range
            # fails with 400; the codes are those GCS uses for POST policy sizes.
            if req.content_length > hi:
                raise _GcsError(400, "EntityTooLarge", details="Content-Length %d exceeds %d."
                                % (req.content_length, hi))
            if req.content_length < lo:
                raise _GcsError(400, "EntityTooSmall", details="Content-Length %d is below %d."
                                % (req.content_length, lo))
        return terms

    def _check_digests(self, terms, sha, md5):
        """A declared digest the body does not have: 400 BadDigest (None when fine).

        GCS's BadDigest text names Content-MD5 and x-goog-hash; its check of
        x-goog-content-sha256 on a signed URL is not confirmed. Refusing keeps
        a node that hashes one thing and sends another from ever committing.
        """
        if terms["sha256"] is not None and terms["sha256"] != sha:
            return _GcsError(400, "BadDigest", details="x-goog-content-sha256 does not match the body.")
        if terms["md5"] is not None and terms["md5"] != md5:
            return _GcsError(400, "BadDigest", details="Content-MD5 does not match the body.")
        return None

    def _receive_put(self, ctx, length):
        """Stream the body to a temp file while hashing: (temp path, sha256 hex, md5 hex).

        Never holds the body. A peer that leaves early makes the reader raise
        ClientGone; the temp file is removed and nothing is committed.
        """
        tmp = os.path.join(self._tmp_dir, "put-%d-%d.part" % (ctx.exchange.seq, os.getpid()))
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        done = False
        try:
            sha = hashlib.sha256()
            md5 = hashlib.md5(usedforsecurity=False)
            mv = memoryview(bytearray(min(IO_BLOCK_BYTES, max(1, length))))
            while True:
                n = ctx.body.readinto(mv)
                if not n:
                    break
                chunk = mv[:n]
                sha.update(chunk)
                md5.update(chunk)
                while chunk:
                    chunk = chunk[os.write(fd, chunk):]
            if self.fsync:
                os.fsync(fd)
            done = True
        finally:
            os.close(fd)
            if not done:
                os.unlink(tmp)
        return tmp, sha.hexdigest(), md5.hexdigest()

    def _goog_headers(self, ctx, content_type):
        seq = ctx.exchange.seq
        return [("X-GUploader-UploadID", "CONFORMANCE-" + self.server.host_id(seq)),
                ("Content-Type", content_type),
                ("Server", GCS_SERVER_HEADER)]

    def _gcs_error(self, ctx, err, close=False):
        body = gcs_error_xml(err.code, err.message, err.details, err.parameter, err.extra)
        ctx.note(error_details=err.details)
        ctx.respond(err.status, self._goog_headers(ctx, GCS_XML_CONTENT_TYPE), body=body,
                    close=close, error_code=err.code)

    def _gcs_refuse_early(self, ctx, err, close=False):
        """Answer before reading the body, then drain what the client still sends.

        Answering first means a refused upload costs no body; draining after
        (bounded by LINGER_SILENCE_S of silence) lets a client still sending
        read the answer instead of a RST. An unread body also closes the
        connection (respond() sees it).
        """
        ctx.body.expect_continue = False   # no "100 Continue" after a final answer
        ctx.note(body_bytes_at_answer=ctx.body.consumed)
        self._gcs_error(ctx, err, close=close)
        ctx.linger()


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
