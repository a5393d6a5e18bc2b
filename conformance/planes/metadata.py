"""The metadata server fake: workload identity tokens, shared by every plane that needs them.

The crawler (CRAWLER-IDENTITY-*) and the session worker (SESSION-DISPATCH-2,
SESSION-SERVICE-5) both mint their identity token here. Plain HTTP, reached
through ``GCE_METADATA_HOST``. A ``GET`` of the identity path needs
``Metadata-Flavor: Google`` (403 otherwise, as the real one) and an
``audience``; every answer mints a fresh compact JWS whose payload carries the
audience, a sequence number and a unique ``CANARY...`` marker. The fake a
token is presented to asks this one which token it was (``present``) or
whether it minted it for an audience (``minted_for``), so "which token went
where" is read from the fakes, never inferred.

    metadata = MetadataServer(seed, secret_values)           # plane.metadata
    env["GCE_METADATA_HOST"] = metadata.host
    metadata.add_fault(faults.hang(), metadata.identity_match())
    metadata.requests(), metadata.tokens(), metadata.started(n)
"""

import base64
import json
import os
import secrets as _secrets
import threading
import time

from conformance.fake import Fake, read_body
from conformance.faults import Match
from conformance.servers import LoopbackServer

__all__ = ["MetadataServer", "Minted", "IdentityRequest", "IDENTITY_VARIANTS", "IDENTITY_PATH",
           "DEFAULT_SERVICE_ACCOUNT"]

# The path of the identity token (google-auth's, CRAWLER-IDENTITY-1, SESSION-DISPATCH-2).
IDENTITY_PATH = "/computeMetadata/v1/instance/service-accounts/default/identity"
# The e-mail a token's payload names, unless the plane says which workload it is.
DEFAULT_SERVICE_ACCOUNT = "crawler-job@conformance.iam.gserviceaccount.com"
# An identity request has no body; this much of one is kept for the record and the
# rest is read and dropped (a node sending more is recorded, not buffered).
MAX_RECORDED_BODY_BYTES = 64 * 1024

# Answers the metadata server gives instead of a good token (CRAWLER-IDENTITY-3).
IDENTITY_VARIANTS = {
    "not-a-jwt": lambda token: b"not-a-jwt",
    "newline": lambda token: token + b"\n",
    "four-segments": lambda token: token + b".c2Vn",
    "padded": lambda token: token.rsplit(b".", 1)[0] + b"." + token.rsplit(b".", 1)[1][:40] + b"==",
    "empty": lambda token: b"",
    "spaces": lambda token: b" " + token,
}


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=")


class Minted(object):
    """One identity token the metadata server minted (secret: never printed)."""

    def __init__(self, seq, audience, token, marker):
        self.seq = seq
        self.audience = audience
        self.token = token
        self.marker = marker
        self.presented = []          # [(route kind, exchange seq)] each time a broker saw it

    def __repr__(self):
        return "Minted(#%d, audience=%r)" % (self.seq, self.audience)


class IdentityRequest(object):
    """One request to the identity path: what it asked, what it got.

    audience/format: decoded query values (None when absent); raw_query: as sent;
    flavor: the Metadata-Flavor header; authorization: True when one was sent;
    minted: the Minted token, or None (refused, or a fault answered instead).
    """

    def __init__(self, exchange, request):
        self.exchange = exchange
        self.raw_query = request.raw_query
        self.query_list = list(request.query_list)
        self.audience = request.query.get("audience")
        self.format = request.query.get("format")
        self.flavor = request.headers.get("metadata-flavor")
        self.authorization = request.headers.get("authorization") is not None
        self.header_names = [name for name, _ in request.headers]
        self.body_bytes = 0
        self.minted = None
        self.status = None

    @property
    def token_seq(self):
        return self.minted.seq if self.minted else None

    def __repr__(self):
        return "IdentityRequest(audience=%r, status=%r, token #%s)" % (self.audience, self.status, self.token_seq)


class MetadataServer(Fake):
    """The metadata server. Options (also plane keywords):

    identity_status  the status of an answer carrying a token (default 200).
    identity_body    what to answer instead of the token: bytes, a
                     callable(token bytes) -> bytes, or a name from
                     IDENTITY_VARIANTS. None: the token itself.

    Both may also be set as attributes before the run. service_account
    (not a plane keyword: the plane's own choice) is the e-mail in each
    token's payload.
    Faults: ``add_fault(fault, identity_match(**fields))`` for the identity
    route; every request the server receives without a match.
    Observing: requests(), tokens(), started(n); present(), minted_for().
    """

    # The keywords a plane passes through to this fake.
    OPTIONS = ("identity_status", "identity_body", "identity_chunk_bytes")

    def __init__(self, seed=0, secret_values=None, identity_status=200, identity_body=None,
                 service_account=DEFAULT_SERVICE_ACCOUNT, identity_chunk_bytes=None):
        Fake.__init__(self, LoopbackServer("metadata", tls=False, seed=seed, secret_values=secret_values,
                                           server_header="Metadata Server for VM"))
        self.service_account = service_account
        self.identity_status = identity_status
        self.identity_chunk_bytes = identity_chunk_bytes  # the token sent chunked, in pieces of this size
        self.identity_body = IDENTITY_VARIANTS[identity_body] if isinstance(identity_body, str) else identity_body
        self._lock = threading.RLock()
        self._minted = {}            # token -> Minted
        self._minted_list = []
        self._requests = []
        self.server.route("GET", IDENTITY_PATH, self._handle, raw=True)

    @staticmethod
    def identity_match(**fields):
        """The Match of the identity route: every GET (the only route this
        server answers), narrowed by fields (first=1, phase="response", ...)."""
        return Match(**dict({"method": "GET"}, **fields))

    @property
    def host(self):
        """GCE_METADATA_HOST: host:port, no scheme."""
        return "127.0.0.1:%d" % self.port

    # ---------------------------------------------------------------- handler
    def _mint(self, audience):
        with self._lock:
            seq = len(self._minted_list) + 1
            marker = "CANARY" + _secrets.token_hex(16)
            header = {"alg": "RS256", "kid": "conformance-%s" % _secrets.token_hex(8), "typ": "JWT"}
            now = int(time.time())
            payload = {"aud": audience, "azp": "100000000000000000001",
                       "email": self.service_account, "email_verified": True,
                       "exp": now + 3600, "iat": now, "iss": "https://accounts.google.com",
                       "sub": "100000000000000000001", "conformance_seq": seq, "conformance_marker": marker}
            token = b".".join([_b64url(json.dumps(header).encode()), _b64url(json.dumps(payload).encode()),
                               _b64url(os.urandom(256))]).decode("ascii")
            minted = Minted(seq, audience, token, marker)
            self._minted[token] = minted
            self._minted_list.append(minted)
            return minted

    def _handle(self, ctx):
        req = ctx.request
        record = IdentityRequest(ctx.exchange, req)
        record.body_bytes = len(read_body(ctx, MAX_RECORDED_BODY_BYTES))
        with self._lock:
            self._requests.append(record)
        if ctx.refused:
            ctx.respond(500)  # replaced by the fault's answer
            return
        headers = [("Metadata-Flavor", "Google"), ("Content-Type", "text/html")]
        if record.flavor != "Google":
            # What the real server answers a request without the header.
            record.status = 403
            ctx.respond(403, headers, body=b"Missing required header \"Metadata-Flavor\": \"Google\"\n")
            return
        if not record.audience:
            record.status = 400
            ctx.respond(400, headers, body=b"non-empty audience parameter required\n")
            return
        minted = self._mint(record.audience)
        record.minted = minted
        record.status = self.identity_status
        ctx.note(audience=record.audience, token_seq=minted.seq)
        body = minted.token.encode("ascii")
        if self.identity_body is not None:
            body = self.identity_body(body) if callable(self.identity_body) else bytes(self.identity_body)
        ctx.respond(self.identity_status, headers, body=body, chunk_bytes=self.identity_chunk_bytes)

    def present(self, token, kind, exchange_seq):
        """A fake (the crawler's broker, the session's control plane) saw token
        on a `kind` call: (Minted or None, first time presented). Records the
        presentation."""
        with self._lock:
            minted = self._minted.get(token) if token else None
            if minted is None:
                return None, False
            fresh = not minted.presented
            minted.presented.append((kind, exchange_seq))
            return minted, fresh

    def minted_for(self, token, audience, kind="presented"):
        """True when this server minted token for exactly audience (a control
        plane's token_check); the presentation is recorded as present() does."""
        minted, _fresh = self.present(token, kind, None)
        return minted is not None and minted.audience == audience

    # ---------------------------------------------------------------- observe
    def requests(self):
        """Every request the identity path handled (IdentityRequest), in order."""
        with self._lock:
            return list(self._requests)

    def tokens(self):
        """Every token minted (Minted), in order."""
        with self._lock:
            return list(self._minted_list)

    def started(self, n=1):
        """Predicate for plane.stop_when: the server has received n requests."""
        return lambda: len(self.transcript) >= n

    # ---------------------------------------------------------------- secrets
    def secrets(self):
        """Each minted token, its payload and signature segments, and its marker."""
        values = []
        for item in self.tokens():
            parts = item.token.split(".")
            values += [item.token, parts[1], parts[2], item.marker]
        return values

    def describe_secret(self, secret):
        """A name for secret when it is one of this fake's, else None."""
        for item in self.tokens():
            if secret == item.token:
                return "identity token #%d" % item.seq
            if secret == item.marker:
                return "the marker of identity token #%d" % item.seq
            if secret in item.token:
                return "a segment of identity token #%d" % item.seq
        return None
