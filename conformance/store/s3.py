"""The store's S3 dialect: presigned GET and presigned POST, S3 error XML.

    url = store.presign_get("in/a.bin", token)      # GET origin/in/a.bin?X-Amz-...
    post = store.presign_post("out/run-1/", token)  # {"url", "fields", "key_prefix"}

What it enforces, as S3 does (codes and texts as S3 sends them):

* GET: the query is a SigV4-shaped presigned query (X-Amz-Algorithm,
  X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders,
  X-Amz-Security-Token, X-Amz-Signature). The signature is simply
  HMAC-SHA256(store secret, "METHOD\\n/key\\ncanonical query"): shaped like S3,
  not S3's algorithm. Bad signature: 403 SignatureDoesNotMatch; past
  X-Amz-Date + X-Amz-Expires: 403 AccessDenied "Request has expired"; token
  expired by expire_token(): 400 ExpiredToken (S3 answers 400 for an expired
  session token); absent key: 404 NoSuchKey.
* POST /upload: multipart/form-data parsed while streaming (multipart.py:
  fields before ``file``; the file streamed to a temp file while hashed;
  anything after the file part is ignored, as S3 ignores it). Checked: the
  policy's signature (403 SignatureDoesNotMatch), the token (400 ExpiredToken
  / InvalidToken), the policy's expiration and every condition (403
  AccessDenied "Invalid according to Policy: ..."), every form field covered
  by the policy ("Extra input fields"), the file size against
  content-length-range (400 EntityTooLarge / EntityTooSmall), a ``key`` field
  (400 InvalidArgument), Content-Length present and not chunked (411
  MissingContentLength). Success: 204 No Content with ETag and Location (S3's
  default success_action_status), the object committed by rename once the
  whole body has been parsed; a policy field success_action_status of 200
  or 201 answers as S3 does (200 with no body, 201 with a PostResponse XML).
* Anything else no route serves: 405 MethodNotAllowed (S3 is the store's voice).
"""

import base64
import datetime
import email.utils
import hmac
import json
import re
import secrets as _secrets
import time

from conformance.servers import S3_MESSAGES, s3_error_xml
from conformance.store.core import (
    MAX_CLOCK_SKEW_S, Dialect, Route, compact_utc, key_from_path, parse_compact_utc, quote,
    utc_datetime,
)
from conformance.store.multipart import FormError, FormReader

__all__ = ["S3Dialect", "S3Error", "UPLOAD_PATH", "ALGORITHM", "REGION", "DEFAULT_MAX_BYTES"]

UPLOAD_PATH = "/upload"
ALGORITHM = "AWS4-HMAC-SHA256"
REGION = "us-east-1"
# Largest object a presigned POST admits unless presign_post says otherwise.
DEFAULT_MAX_BYTES = 1 << 30


class S3Error(Exception):
    """A refusal answered as an S3 XML error document."""

    def __init__(self, status, code, message=None, extra=()):
        Exception.__init__(self, code)
        self.status = status
        self.code = code
        self.message = message if message is not None else S3_MESSAGES.get(code, code)
        self.extra = extra


def _xml_text(value):
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _iso_expiration(t):
    return utc_datetime(t).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _parse_iso(text):
    m = re.match(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?Z\Z", text)
    if not m:
        raise ValueError("expiration is not ISO-8601 UTC")
    dt = datetime.datetime(*[int(x) for x in m.groups()])
    return (dt - datetime.datetime(1970, 1, 1)).total_seconds()


def _canonical_query(pairs):
    return "&".join("%s=%s" % (quote(k), quote(v)) for k, v in sorted(pairs)
                    if k != "X-Amz-Signature")


def _http_date_of(obj):
    return email.utils.formatdate(time.time() - (time.monotonic() - obj.committed_at), usegmt=True)


class S3Dialect(Dialect):
    """Presigned GET and POST of one store; see the module docstring."""
    name = "s3"
    server_header = "AmazonS3"

    def __init__(self, store):
        Dialect.__init__(self, store)
        self.access_key_id = "AKIA" + _secrets.token_hex(8).upper()

    def routes(self):
        return [Route("POST", UPLOAD_PATH, self._handle_post, key_in_body=True),
                Route("GET", "/*", self._handle_get, key=key_from_path)]

    # ------------------------------------------------------------ signing
    def _credential(self, t):
        return "%s/%s/%s/s3/aws4_request" % (self.access_key_id, compact_utc(t)[:8], REGION)

    def presign_get(self, key, token, expires_in_s=900, issued_at=None, method="GET"):
        """A presigned URL for key, carrying token; valid for expires_in_s."""
        store = self.store
        t = store.now() if issued_at is None else issued_at
        params = [
            ("X-Amz-Algorithm", ALGORITHM),
            ("X-Amz-Credential", self._credential(t)),
            ("X-Amz-Date", compact_utc(t)),
            ("X-Amz-Expires", str(int(expires_in_s))),
            ("X-Amz-SignedHeaders", "host"),
            ("X-Amz-Security-Token", token),
        ]
        signature = store.sign("%s\n/%s\n%s" % (method, key, _canonical_query(params)))
        params.append(("X-Amz-Signature", signature))
        store.remember(signature)
        return store.url_for(key) + "?" + "&".join("%s=%s" % (k, quote(v)) for k, v in params)

    def presign_post(self, key_prefix, token, expires_in_s=900, max_bytes=DEFAULT_MAX_BYTES,
                     min_bytes=0, issued_at=None, key_field=None, success_action_status=None):
        """S3-style presigned POST: {"url", "fields", "key_prefix"}.

        The policy allows keys starting with key_prefix and file sizes in
        [min_bytes, max_bytes]. ``key_field`` adds a ``key`` field first
        (as boto3 does); by default there is none and the node adds it.
        ``success_action_status`` ("200" or "201") adds that field, which
        the policy then requires and a success answers with.
        """
        store = self.store
        t = store.now() if issued_at is None else issued_at
        fields = {}
        if key_field is not None:
            fields["key"] = key_field
        fields.update([
            ("x-amz-algorithm", ALGORITHM),
            ("x-amz-credential", self._credential(t)),
            ("x-amz-date", compact_utc(t)),
            ("x-amz-security-token", token),
        ])
        if success_action_status is not None:
            fields["success_action_status"] = str(success_action_status)
        conditions = [["starts-with", "$key", key_prefix],
                      ["content-length-range", int(min_bytes), int(max_bytes)]]
        conditions += [{k: v} for k, v in fields.items() if k != "key"]
        policy = {"expiration": _iso_expiration(t + expires_in_s), "conditions": conditions}
        policy_b64 = base64.b64encode(json.dumps(policy, separators=(",", ":")).encode()).decode()
        signature = store.sign(policy_b64)
        fields["policy"] = policy_b64
        fields["x-amz-signature"] = signature
        store.remember(policy_b64, signature)
        return {"url": store.origin + UPLOAD_PATH, "fields": fields, "key_prefix": key_prefix}

    # ------------------------------------------------------------ answers
    def _error(self, ctx, err, close=False):
        server = self.store.server
        seq = ctx.exchange.seq
        body = s3_error_xml(err.code, err.message, server.request_id(seq), server.host_id(seq),
                            err.extra)
        ctx.respond(err.status, self._amz_headers(ctx, "application/xml"), body=body,
                    close=close, error_code=err.code)

    def _amz_headers(self, ctx, content_type=None):
        server = self.store.server
        seq = ctx.exchange.seq
        headers = [("x-amz-request-id", server.request_id(seq)),
                   ("x-amz-id-2", server.host_id(seq))]
        if content_type:
            headers.append(("Content-Type", content_type))
        return headers

    def answer_unrouted(self, ctx):
        ctx.body.drain()
        ctx.body_finished()
        self._error(ctx, S3Error(405, "MethodNotAllowed", extra=(
            ("Method", ctx.request.method), ("ResourceType", "OBJECT"))))

    def _check_token(self, token):
        if token is None:
            raise S3Error(403, "AccessDenied")
        state = self.store.token_state(token)
        if state == "unknown":
            raise S3Error(400, "InvalidToken")
        if state == "expired":
            raise S3Error(400, "ExpiredToken")

    # ------------------------------------------------------------ presigned GET
    def _handle_get(self, ctx):
        store = self.store
        ctx.body.drain()
        ctx.body_finished()
        req = ctx.request
        key = req.path[1:]
        if req.has_query:
            ctx.note(token_seq=store.token_seq(req.query.get("X-Amz-Security-Token")))
        try:
            self._check_presigned_get(req, key)
            obj = store.objects().get(key)
            if obj is None:
                raise S3Error(404, "NoSuchKey", extra=(("Key", key),))
        except S3Error as err:
            self._error(ctx, err)
            return
        headers = self._amz_headers(ctx, obj.content_type)
        headers += [("ETag", obj.etag), ("Last-Modified", _http_date_of(obj)),
                    ("Accept-Ranges", "none")]
        ctx.respond(200, headers, source=store.source_of(obj))

    def _check_presigned_get(self, req, key):
        if not req.has_query:
            raise S3Error(403, "AccessDenied")
        q = req.query
        needed = ("X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-Date",
                  "X-Amz-SignedHeaders", "X-Amz-Expires")
        if any(name not in q for name in needed):
            raise S3Error(400, "AuthorizationQueryParametersError")
        if q["X-Amz-Algorithm"] != ALGORITHM:
            raise S3Error(400, "AuthorizationQueryParametersError",
                          'X-Amz-Algorithm only supports "%s"' % ALGORITHM)
        if q["X-Amz-Credential"].split("/", 1)[0] != self.access_key_id:
            raise S3Error(403, "InvalidAccessKeyId")
        pairs = [(k, v) for k, v in req.query_list]
        expected = self.store.sign("%s\n/%s\n%s" % ("GET", key, _canonical_query(pairs)))
        if not hmac.compare_digest(expected, q["X-Amz-Signature"]):
            raise S3Error(403, "SignatureDoesNotMatch")
        try:
            issued = parse_compact_utc(q["X-Amz-Date"])
            expires = int(q["X-Amz-Expires"])
        except ValueError:
            raise S3Error(400, "AuthorizationQueryParametersError")
        now = self.store.now()
        if issued - now > MAX_CLOCK_SKEW_S:
            raise S3Error(403, "AccessDenied", "Request is not valid yet")
        if now > issued + expires:
            raise S3Error(403, "AccessDenied", "Request has expired", extra=(
                ("X-Amz-Expires", str(expires)),
                ("Expires", _iso_expiration(issued + expires)[:-5] + "Z"),
                ("ServerTime", _iso_expiration(now)[:-5] + "Z")))
        self._check_token(q.get("X-Amz-Security-Token"))

    # ------------------------------------------------------------ presigned POST
    def _handle_post(self, ctx):
        req = ctx.request
        if req.chunked or req.content_length is None:
            # The contract forbids chunked uploads; S3 refuses them like this.
            self._error(ctx, S3Error(411, "MissingContentLength"), close=True)
            ctx.linger()
            return
        ctype = req.headers.get("content-type", "")
        m = re.match(r'(?i)^\s*multipart/form-data\s*;(?:.*;)?\s*boundary=(?:"([^"]+)"|([^;\s]+))', ctype)
        if not m:
            ctx.body.drain()
            ctx.body_finished()
            self._error(ctx, S3Error(412, "PreconditionFailed", extra=(
                ("Condition", "Bucket POST must be of the enclosure-type multipart/form-data"),)))
            return
        boundary = (m.group(1) or m.group(2)).encode("latin-1")
        reader = FormReader(ctx.body, boundary, self.store.temp_path("upload", ctx.exchange.seq))
        try:
            self._upload(ctx, reader)
        finally:
            reader.cleanup()

    def _upload(self, ctx, reader):
        """One presigned POST: read the fields, validate, stream the file, commit."""
        store = self.store
        try:
            fields, names, file_part, leftover = reader.read_fields()
        except FormError as err:
            ctx.body.drain()
            ctx.body_finished()
            self._error(ctx, S3Error(400, err.code, err.message, err.extra))
            return
        ctx.note(form_fields=names, token_seq=store.token_seq(fields.get("x-amz-security-token")))
        key = fields.get("key")
        if key is not None:
            ctx.set_key(key)
        if file_part is None:
            ctx.body.drain()
            ctx.body_finished()
            self._error(ctx, S3Error(400, "InvalidArgument", "POST requires exactly one file upload "
                                     "per request.", extra=(("ArgumentName", "file"), ("ArgumentValue", "0"))))
            return
        ctx.note(file_name=file_part[1], file_content_type=file_part[2])
        # Everything but the size is checked before the file streams; a
        # refused upload is still read to its end, but never written.
        error = None
        size_range = None
        if not ctx.refused:
            try:
                size_range = self._validate_fields(fields, [n.lower() for n in names])
            except S3Error as err:
                error = err
        max_bytes = size_range[1] if size_range else None
        store_it = error is None and not ctx.refused
        sha, size, after = reader.stream_file(leftover, store_it, max_bytes)
        ctx.body_finished()
        ctx.note(file_bytes=size, fields_after_file=after)
        if ctx.refused or error is not None or size is None:
            reader.cleanup()     # before answering: a client that got the answer sees no temp file
        if ctx.refused:
            ctx.respond(500)  # the fault's answer replaces this
            return
        if error is None and size is None:
            error = S3Error(400, "MalformedPOSTRequest")
        if error is None and size_range is not None:
            lo, hi = size_range
            if size > hi:
                error = S3Error(400, "EntityTooLarge", extra=(
                    ("ProposedSize", str(size)), ("MaxSizeAllowed", str(hi))))
            elif size < lo:
                error = S3Error(400, "EntityTooSmall", extra=(
                    ("ProposedSize", str(size)), ("MinSizeAllowed", str(lo))))
        if error is not None:
            reader.cleanup()
            self._error(ctx, error)
            return
        final = store.new_object_path(key)
        reader.move_file(final, store.fsync)
        ex = ctx.exchange
        obj = store.commit(key, sha, size, final, "upload", t_request=ex.t_start,
                           t_body_done=ex.t_body_done, exchange_seq=ex.seq)
        ctx.note(committed_seq=obj.seq)
        headers = self._amz_headers(ctx)
        headers += [("ETag", obj.etag), ("Location", store.url_for(key))]
        wanted = fields.get("success_action_status")
        if wanted == "201":  # S3: 201 Created with a PostResponse document
            body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<PostResponse><Location>%s</Location>"
                    "<Bucket>conformance</Bucket><Key>%s</Key><ETag>%s</ETag></PostResponse>" % tuple(
                        _xml_text(v) for v in (store.url_for(key), key, obj.etag))).encode("utf-8")
            ctx.respond(201, headers + [("Content-Type", "application/xml")], body=body)
        elif wanted == "200":  # S3: 200 OK with an empty body
            ctx.respond(200, headers, body=b"")
        else:
            ctx.respond(204, headers)
        obj.t_response_sent = time.monotonic()

    def _validate_fields(self, fields, names_lower):
        """Check everything knowable before the file: returns policy limits."""
        def field_(name):
            return fields.get(name)
        policy_b64 = field_("policy")
        if policy_b64 is None:
            raise S3Error(403, "AccessDenied")
        for name in ("key", "x-amz-signature", "x-amz-algorithm", "x-amz-credential", "x-amz-date"):
            if field_(name) is None:
                raise S3Error(400, "InvalidArgument",
                              "Bucket POST must contain a field named '%s'.  If it is specified, "
                              "please check the order of the fields." % name,
                              extra=(("ArgumentName", name), ("ArgumentValue", "")))
        if field_("x-amz-algorithm") != ALGORITHM:
            raise S3Error(400, "InvalidArgument", "Unsupported algorithm",
                          extra=(("ArgumentName", "x-amz-algorithm"),))
        if field_("x-amz-credential").split("/", 1)[0] != self.access_key_id:
            raise S3Error(403, "InvalidAccessKeyId")
        if not hmac.compare_digest(self.store.sign(policy_b64), field_("x-amz-signature")):
            raise S3Error(403, "SignatureDoesNotMatch")
        self._check_token(field_("x-amz-security-token"))
        try:
            policy = json.loads(base64.b64decode(policy_b64, validate=True).decode("utf-8"))
            expiration = _parse_iso(policy["expiration"])
            conditions = policy["conditions"]
            if not isinstance(conditions, list):
                raise ValueError("conditions is not a list")
        except (ValueError, KeyError, TypeError) as e:
            raise S3Error(400, "InvalidPolicyDocument", "Invalid Policy: %s" % e)
        if self.store.now() > expiration:
            raise S3Error(403, "AccessDenied", "Invalid according to Policy: Policy expired.")
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
                raise S3Error(400, "InvalidPolicyDocument", "Invalid Policy: bad condition")
            if op == "content-length-range":
                size_range = (int(name), int(value))
                continue
            fname = str(name).lstrip("$").lower()
            covered.add(fname)
            actual = fields.get(fname)
            ok = actual is not None and (actual == value if op == "eq" else
                                         op == "starts-with" and actual.startswith(value))
            if not ok:
                raise S3Error(403, "AccessDenied", "Invalid according to Policy: Policy Condition "
                              "failed: %s" % json.dumps([op, name if str(name).startswith("$")
                                                         else "$" + str(name), value]))
        extra = [n for n in names_lower if n not in covered and not n.startswith("x-ignore-")]
        if extra:
            raise S3Error(403, "AccessDenied", "Invalid according to Policy: Extra input fields: %s"
                          % ", ".join(extra))
        return size_range
