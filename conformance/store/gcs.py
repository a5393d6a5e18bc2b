"""The store's GCS dialect: one create-only upload through a V4 signed PUT URL.

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
  of a key, from 1. A PUT without any X-Goog-* parameter is handed back to the
  store's voice (S3: 405 MethodNotAllowed).
* Observations for checks (shown on the store object): put_targets (the raw
  request target of each PUT; a secret the transcript masks, kept for
  byte-exact comparison), on_put (a hook called as each PUT's head arrives,
  its value kept in put_observed) and put_success_status (the status
  answered after a commit).
"""

import base64
import hashlib
import hmac
import os
import re
import threading
import time
import urllib.parse
import xml.sax.saxutils
from dataclasses import dataclass
from typing import Tuple

from conformance.servers import IO_BLOCK_BYTES
from conformance.store.core import (
    MAX_CLOCK_SKEW_S, Dialect, Route, compact_utc, key_from_path, parse_compact_utc, quote,
)

__all__ = ["GcsDialect", "GcsError", "gcs_error_xml", "GCS_SIGNER_EMAIL", "GCS_QUERY_PARAMS",
           "GCS_MESSAGES"]

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


class GcsError(Exception):
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
    query = "&".join(sorted("%s=%s" % (quote(k), quote(v)) for k, v in query_pairs
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


class GcsDialect(Dialect):
    """V4 signed PUT of one store; see the module docstring."""
    name = "gcs"
    server_header = GCS_SERVER_HEADER

    def __init__(self, store):
        Dialect.__init__(self, store)
        self._lock = threading.Lock()
        self._signed_puts = {}       # signature -> _SignedPut
        self._revoked = set()        # signatures refused by revoke_signature()
        self.put_targets = []
        self.on_put = None
        self.put_observed = []
        self.put_success_status = 200

    def routes(self):
        # Key "bucket/object".
        return [Route("PUT", "/*", self._handle_put, key=key_from_path)]

    # ------------------------------------------------------------ signing
    def _sign(self, string_to_sign):
        # HMAC-SHA512 stands in for GCS's RSA-SHA256 (no RSA in the standard
        # library): 128 lowercase hex digits, which the crawler's validator accepts.
        return self.store.sign(string_to_sign, hashlib.sha512)

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
        store = self.store
        if not bucket or "/" in bucket or not object_name:
            raise ValueError("sign_put needs a bucket without '/' and a non-empty object name")
        expires_in_s = int(expires_in_s)
        if not 1 <= expires_in_s <= GCS_MAX_EXPIRES_S:
            raise ValueError("expires_in_s must be within [1, %d] (GCS's V4 limit)" % GCS_MAX_EXPIRES_S)
        signed = {"host": urllib.parse.urlsplit(store.origin).netloc}
        for name, value in headers:
            lname = name.lower()
            if lname in signed or not _TOKEN_NAME.match(name):
                raise ValueError("sign_put: header %r is repeated, reserved (host) or not a token" % name)
            if any(c in value for c in "\r\n") or not value.isascii():
                raise ValueError("sign_put: the value of header %r cannot be sent as-is" % name)
            signed[lname] = _goog4_header_value([value])
        names = sorted(signed)
        t = store.now() if issued_at is None else issued_at
        date = compact_utc(t)
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
        signature = self._sign(_goog4_string_to_sign(date, scope, canonical))
        params.append(("X-Goog-Signature", signature))
        store.remember(signature)
        with self._lock:
            record = _SignedPut(len(self._signed_puts) + 1, "%s/%s" % (bucket, object_name),
                                tuple((n, signed[n]) for n in names), t, expires_in_s)
            self._signed_puts[signature] = record
        return store.origin + canonical_uri + "?" + "&".join("%s=%s" % (k, quote(v)) for k, v in params)

    def revoke_signature(self, signature):
        """From now on, a PUT carrying this signature is refused (403 AccessDenied),
        as GCS refuses a URL signed by a key since deleted."""
        with self._lock:
            self._revoked.add(signature)

    # ------------------------------------------------------------ the PUT route
    def _handle_put(self, ctx):
        """PUT /<bucket>/<object> through a sign_put() URL; see the module docstring.

        Everything knowable from the head is checked before one body byte is
        read, so a refused upload costs no body; the precondition is checked
        at commit, where it cannot race.
        """
        store = self.store
        req = ctx.request
        with self._lock:
            self.put_targets.append(req.target)
        if self.on_put is not None:
            self.put_observed.append(self.on_put())
        if not any(name.lower().startswith("x-goog-") for name, _ in req.query_list):
            # Not a signed URL at all: the store's own answer to a bare PUT.
            store.answer_unrouted(ctx)
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
                raise GcsError(411, "MissingContentLength")
            terms = self._put_terms(req)
        except GcsError as err:
            # After a 411 the framing is unknown: bytes that follow are not a request.
            self._refuse_early(ctx, err, close=err.status == 411)
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
                final = store.new_object_path(key)
                os.rename(tmp, final)
                tmp = final          # removed below unless committed
                ex = ctx.exchange
                obj = store.commit(key, sha, req.content_length, final, "gcs-put",
                                   if_generation=terms["if_generation"],
                                   content_type=terms["content_type"], metadata=terms["metadata"],
                                   md5=md5, t_request=ex.t_start, t_body_done=ex.t_body_done,
                                   exchange_seq=ex.seq)
                if obj is None:
                    error = GcsError(412, "PreconditionFailed", details=(
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
            self._error(ctx, error)
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
                raise GcsError(400, "MalformedSecurityHeader", parameter=name,
                               details="Missing %s parameter in the query string." % name)
        signature = q["X-Goog-Signature"]
        with self._lock:
            record = self._signed_puts.get(signature)
        ctx.note(signature_known=record is not None, signed_url_seq=record.seq if record else None)
        if q["X-Goog-Algorithm"] != GCS_ALGORITHM:
            raise GcsError(400, "MalformedSecurityHeader", parameter="X-Goog-Algorithm",
                           details="Unsupported algorithm; expected %s." % GCS_ALGORITHM)
        email, _, scope = q["X-Goog-Credential"].partition("/")
        date = q["X-Goog-Date"]
        try:
            issued = parse_compact_utc(date)
        except ValueError:
            raise GcsError(400, "MalformedSecurityHeader", parameter="X-Goog-Date",
                           details="Invalid X-Goog-Date; expected YYYYMMDD'T'HHMMSS'Z'.")
        if not email or scope != "%s/%s" % (date[:8], GCS_SCOPE_TAIL):
            raise GcsError(400, "MalformedSecurityHeader", parameter="X-Goog-Credential",
                           details="Invalid credential scope; expected EMAIL/%s/%s."
                           % (date[:8], GCS_SCOPE_TAIL))
        expires = q["X-Goog-Expires"]
        if not expires.isdigit() or not 1 <= int(expires) <= GCS_MAX_EXPIRES_S:
            raise GcsError(400, "MalformedSecurityHeader", parameter="X-Goog-Expires",
                           details="X-Goog-Expires must be an integer within [1, %d]."
                           % GCS_MAX_EXPIRES_S)
        if not re.match(r"^[0-9a-f]+\Z", signature):
            raise GcsError(400, "MalformedSecurityHeader", parameter="X-Goog-Signature",
                           details="Signature was not hex encoded.")
        now = self.store.now()
        if issued - now > MAX_CLOCK_SKEW_S:
            # Not confirmed against GCS: the code it uses for a URL dated in the
            # future was not found; the expired-URL answer is the likeliest.
            raise GcsError(400, "ExpiredToken", details="Request is not valid yet: %s." % date)
        if now > issued + int(expires):
            raise GcsError(400, "ExpiredToken", details="Request has expired: %d"
                           % int(issued + int(expires)))
        signed_names = q["X-Goog-SignedHeaders"].split(";")
        if "host" not in signed_names or signed_names != sorted(set(signed_names)) or \
                any(n != n.lower() or not n for n in signed_names):
            raise GcsError(400, "MalformedSecurityHeader", parameter="X-Goog-SignedHeaders",
                           details="SignedHeaders must be lowercase, sorted, ';'-separated "
                           "and include host.")
        header_pairs = []
        for name in signed_names:
            values = req.headers.get_all(name)
            if not values:
                # Real GCS: MalformedSecurityHeader, not SignatureDoesNotMatch.
                raise GcsError(400, "MalformedSecurityHeader", parameter=name,
                               details="Header was included in signedheaders, but not in the request.")
            header_pairs.append((name, _goog4_header_value(values)))
        unsigned = sorted(set(n.lower() for n, _ in req.headers
                              if n.lower().startswith("x-goog-") and n.lower() not in signed_names))
        if unsigned:
            raise GcsError(400, "MalformedSecurityHeader", parameter=unsigned[0],
                           details="Header was included in the request, but not in signedheaders.")
        if record is not None:
            # Diagnosis only (names, never values): what differs from what was signed.
            signed_now = dict(header_pairs)
            ctx.note(header_mismatch=[n for n, v in record.headers if signed_now.get(n) != v]
                     + [n for n in signed_names if n not in dict(record.headers)])
        canonical = _goog4_canonical_request(req.method, req.raw_path, req.query_list,
                                             header_pairs, ";".join(signed_names))
        string_to_sign = _goog4_string_to_sign(date, scope, canonical)
        if not hmac.compare_digest(self._sign(string_to_sign), signature):
            raise GcsError(403, "SignatureDoesNotMatch", details=GCS_SIGNATURE_DETAILS, extra=(
                ("StringToSign", string_to_sign), ("CanonicalRequest", canonical)))
        with self._lock:
            revoked = signature in self._revoked
        if revoked:
            raise GcsError(403, "AccessDenied", details=(
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
                raise GcsError(400, "InvalidArgument", parameter="x-goog-if-generation-match",
                               details="Invalid x-goog-if-generation-match: %s" % match)
            terms["if_generation"] = int(match)
        declared = req.headers.get("x-goog-content-sha256")
        if declared is not None and declared != GCS_PAYLOAD_HASH:
            if not re.match(r"^[0-9a-fA-F]{64}\Z", declared):
                raise GcsError(400, "InvalidArgument", parameter="x-goog-content-sha256",
                               details="x-goog-content-sha256 is not a hex SHA-256.")
            terms["sha256"] = declared.lower()
        content_md5 = req.headers.get("content-md5")
        if content_md5 is not None:
            try:
                terms["md5"] = base64.b64decode(content_md5, validate=True).hex()
            except ValueError:
                raise GcsError(400, "InvalidArgument", parameter="Content-MD5",
                               details="Content-MD5 is not base64.")
        length_range = req.headers.get("x-goog-content-length-range")
        if length_range is not None:
            m = re.match(r"^\s*(\d+)\s*,\s*(\d+)\s*\Z", length_range)
            if not m or int(m.group(1)) > int(m.group(2)):
                raise GcsError(400, "InvalidArgument", parameter="x-goog-content-length-range",
                               details="Invalid x-goog-content-length-range: %s" % length_range)
            lo, hi = int(m.group(1)), int(m.group(2))
            # Not confirmed against GCS: its docs say an upload outside the range
            # fails with 400; the codes are those GCS uses for POST policy sizes.
            if req.content_length > hi:
                raise GcsError(400, "EntityTooLarge", details="Content-Length %d exceeds %d."
                               % (req.content_length, hi))
            if req.content_length < lo:
                raise GcsError(400, "EntityTooSmall", details="Content-Length %d is below %d."
                               % (req.content_length, lo))
        return terms

    def _check_digests(self, terms, sha, md5):
        """A declared digest the body does not have: 400 BadDigest (None when fine).

        GCS's BadDigest text names Content-MD5 and x-goog-hash; its check of
        x-goog-content-sha256 on a signed URL is not confirmed. Refusing keeps
        a node that hashes one thing and sends another from ever committing.
        """
        if terms["sha256"] is not None and terms["sha256"] != sha:
            return GcsError(400, "BadDigest", details="x-goog-content-sha256 does not match the body.")
        if terms["md5"] is not None and terms["md5"] != md5:
            return GcsError(400, "BadDigest", details="Content-MD5 does not match the body.")
        return None

    def _receive_put(self, ctx, length):
        """Stream the body to a temp file while hashing: (temp path, sha256 hex, md5 hex).

        Never holds the body. A peer that leaves early makes the reader raise
        ClientGone; the temp file is removed and nothing is committed.
        """
        tmp = self.store.temp_path("put", ctx.exchange.seq)
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
            if self.store.fsync:
                os.fsync(fd)
            done = True
        finally:
            os.close(fd)
            if not done:
                os.unlink(tmp)
        return tmp, sha.hexdigest(), md5.hexdigest()

    # ------------------------------------------------------------ answers
    def _goog_headers(self, ctx, content_type):
        seq = ctx.exchange.seq
        return [("X-GUploader-UploadID", "CONFORMANCE-" + self.store.server.host_id(seq)),
                ("Content-Type", content_type),
                ("Server", GCS_SERVER_HEADER)]

    def _error(self, ctx, err, close=False):
        body = gcs_error_xml(err.code, err.message, err.details, err.parameter, err.extra)
        ctx.note(error_details=err.details)
        ctx.respond(err.status, self._goog_headers(ctx, GCS_XML_CONTENT_TYPE), body=body,
                    close=close, error_code=err.code)

    def _refuse_early(self, ctx, err, close=False):
        """Answer before reading the body, then drain what the client still sends.

        Answering first means a refused upload costs no body; draining after
        (bounded by LINGER_SILENCE_S of silence) lets a client still sending
        read the answer instead of a RST. An unread body also closes the
        connection (respond() sees it).
        """
        ctx.body.expect_continue = False   # no "100 Continue" after a final answer
        ctx.note(body_bytes_at_answer=ctx.body.consumed)
        self._error(ctx, err, close=close)
        ctx.linger()
