"""The crawler plane: a fake platform, control plane, source and store for one crawler job.

    plane = ctx.plane()                          # defaults make a small successful run
    result = plane.run()                         # RunResult; the node ran to its end
    plane.status_line()                          # ("CRAWLER_X", "reported") or None
    plane.stored_result()                        # the stored result (StoredObject) or None
    plane.verify_result(plane.stored_result().raw)   # [] when it keeps every CRAWLER-RESULT rule

What it plays (contract/crawler.md), each a LoopbackServer on 127.0.0.1, port 0:

* **Metadata server** (plain HTTP, ``GCE_METADATA_HOST``). ``GET`` of the identity
  path needs ``Metadata-Flavor: Google`` (403 otherwise, as the real one) and an
  ``audience``; every answer mints a fresh compact JWS whose payload carries the
  audience, a sequence number and a unique ``CANARY...`` marker. Options answer
  badly: ``identity_status``, ``identity_body`` (bytes, a callable of the token, or
  a name from IDENTITY_VARIANTS), ``identity_faults`` (oversize, hang, redirect...).
* **Broker** (HTTPS, ``MOSTLYRIGHT_CRAWLER_BOOTSTRAP_URL_BASE``). ``:redeem``
  checks the bearer token (minted here, for exactly ``<audience base>/<sid>:redeem``,
  never presented before) and the execution header; the first valid redemption
  gets the bootstrap response (built then, so expiry windows start at the
  redemption), any later one 409, a bad token 401. ``:fail`` checks its token's
  audience, records the body and answers 204. The bootstrap is serialised with
  plain ``json.dumps`` on purpose: the node must parse leniently.
* **Source site** (HTTPS, reached as ``https://localhost:<port>``): the source bytes
  at ``/data.csv``; ``serve``, ``redirect``, ``generated_jsonl`` add more; every
  hop records the TLS version and address it was served on, so the plane can
  rebuild the node's transport evidence (CRAWLER-FETCH-8).
* **Tripwire** (HTTPS, any path): redirects, proxies and SSRF targets point here;
  any connection to it breaks an invariant.
* **Store**: ``conformance.store.ObjectStore`` (HTTPS, ``STORAGE_EMULATOR_HOST``);
  the capability is one ``sign_put`` URL under ``crawler-quarantine/v2/``.
* **Child**: ``child={...}`` writes a scripted normaliser
  (``conformance.planes.crawler_child``) and pins it with ``MOSTLYRIGHT_CRAWLER_CHILD``;
  ``child_record()`` reads back what it saw.

Acting: ``start``/``wait``/``run``, ``stop_when(condition)`` with the predicates
``identity_started``, ``redeem_started``, ``fail_started``, ``source_started``,
``source_bytes_sent(n)``, ``child_started``, ``put_started``, ``put_body_done``.
Observing: ``status_line``, ``identity_requests``, ``tokens``, ``redeems``,
``fails``, ``source_requests``, ``puts``, ``stored``/``stored_result``/
``stored_bundle``, ``child_record``, ``tripwire_connections``,
``transport_evidence``, ``served_header``, ``verify_result`` (any node's result), and
``reference_result``/``reference_problems`` (the reference node's example work).

``invariants()`` states what must hold after any run, whatever the check was
about (see its docstring); the documents and their rules come from
``conformance.planes.crawler_docs``, never retyped here.
"""

import base64
import collections
import hashlib
import json
import os
import secrets as _secrets
import signal
import socket
import threading
import time
import urllib.parse

from conformance import faults as _faults
from conformance import runner as _runner
from conformance.invariants import Violation, dir_empty
from conformance.planes import crawler_docs as docs
from conformance.runner import HarnessError
from conformance.servers import (BytesSource, LoopbackServer, Reply, IO_BLOCK_BYTES, MISNAMED_CERT_CHAIN,
                                OTHER_CA_FILE, UNTRUSTED_CERT_CHAIN)
from conformance.store import ObjectStore
from conformance.timeouts import POLL_INTERVAL_S

__all__ = ["CrawlerPlane", "make_plane", "Plane", "GeneratedJsonl", "IDENTITY_VARIANTS",
           "SESSION_ID", "AUDIENCE_BASE", "BUCKET", "EXECUTION", "CA_FILE"]

# ---------------------------------------------------------------- the run's fixed identity

# A canonical UUID (version 4): str(uuid.UUID(SESSION_ID)) == SESSION_ID.
SESSION_ID = "3f2b8c1e-7d4a-4e6b-9a15-c0d8e2f47b93"
# Only a string the node puts in token audiences; nothing listens there.
AUDIENCE_BASE = "https://studio.conformance.test/v1/crawler-sessions"
BROKER_PATH = "/v1/crawler-sessions"
BUCKET = "conformance-results"
EXECUTION = "crawler-job-x7k2p"
IDENTITY_PATH = "/computeMetadata/v1/instance/service-accounts/default/identity"
SOURCE_PATH = "/data.csv"
DEFAULT_SOURCE = b"city,temp_c,observed\nOslo,3,2024-01-05\nLima,19,2024-01-05\n\"Qu\xc3\xa9bec, QC\",-8,2024-01-05\n"
CA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ca", "ca.pem")

# Control-plane request bodies are tiny; this much is kept for the record and
# the rest is read and dropped (a node sending more is recorded, not buffered).
MAX_RECORDED_BODY_BYTES = 64 * 1024
# Length of one generated JSON line (GeneratedJsonl): mostly insignificant
# whitespace, so a large source normalises to a small result.
GENERATED_LINE_BYTES = 16 * 1024
# A secret shorter than this is not scanned for (it would match by accident).
MIN_SECRET_CHARS = 12
# Slack when comparing a process's start time (clock-tick resolution, boot
# clock) with the node's exit (monotonic clock): about five ticks.
START_TIME_SLACK_S = 0.05
# How long a child may take to die after the node exits before it counts as
# left behind: a parent-death SIGKILL is delivered at once, but the process
# still has to be scheduled to exit (CRAWLER-CHILD-3 asks "about 1 s").
CHILD_EXIT_GRACE_S = 1.0

# Answers the metadata server gives instead of a good token (CRAWLER-IDENTITY-3).
IDENTITY_VARIANTS = {
    "not-a-jwt": lambda token: b"not-a-jwt",
    "newline": lambda token: token + b"\n",
    "four-segments": lambda token: token + b".c2Vn",
    "padded": lambda token: token.rsplit(b".", 1)[0] + b"." + token.rsplit(b".", 1)[1][:40] + b"==",
    "empty": lambda token: b"",
    "spaces": lambda token: b" " + token,
}

StoredObject = collections.namedtuple("StoredObject", "key obj raw doc")
StoredObject.__doc__ = """A stored object under the quarantine prefix: its key, the store's Obj
(sha256, size, content_type, metadata), its bytes (at most MAX_CRAWLER_RESULT_BYTES + 1)
and the document parsed leniently (None when it is not JSON)."""


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def _timeout_text(value):
    """A timeout as the node reads it ([0-9]+(.[0-9]+)?); strings pass as given."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = ("%.6f" % value).rstrip("0").rstrip(".")
    return text or "0"


def _as_bytes(doc):
    """A crawler_docs builder's result as canonical bytes (it may return bytes or a value)."""
    if isinstance(doc, (bytes, bytearray)):
        return bytes(doc)
    return docs.canonical(doc)


def _fault_rules(server, items, default_match):
    """Install faults given as Fault or (Fault, Match) on server."""
    rules = []
    for item in items or ():
        fault, match = item if isinstance(item, tuple) else (item, None)
        rules.append(server.add_fault(fault, match if match is not None else default_match()))
    return rules


# ---------------------------------------------------------------- records

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


class BrokerCall(object):
    """One POST to ``:redeem`` or ``:fail`` (kind), as the broker saw it.

    exchange: the transcript record (headers masked); header(name): a header as
    received (the Authorization value is kept out of repr); token_seq: which
    minted token was presented (None: none, or not one of ours); problems: what
    the broker found wrong, refusal or not; refusal: why it refused (None when
    it did not); body/doc: the request body and its lenient parse (None when not
    JSON); canonical: body is canonical JSON; status: the answer the broker chose
    (a fault may have replaced it: see exchange.status and exchange.fault).
    """

    def __init__(self, kind, exchange, request, body):
        self.kind = kind
        self.exchange = exchange
        self._headers = list(request.headers)
        self.header_names = [name for name, _ in self._headers]
        self.raw_path = request.raw_path
        self.has_query = request.has_query
        self.content_length = request.content_length
        self.chunked = request.chunked
        self.body = body
        self.doc = None
        self.canonical = False
        self.token_seq = None
        self.problems = []
        self.refusal = None
        self.status = None
        if body:
            try:
                self.doc = docs.parse_lenient(body)
                self.canonical = docs.canonical(self.doc) == body
            except docs.JsonError:
                self.doc = None

    def header(self, name):
        name = name.lower()
        for k, v in self._headers:
            if k.lower() == name:
                return v
        return None

    def header_all(self, name):
        name = name.lower()
        return [v for k, v in self._headers if k.lower() == name]

    def __repr__(self):
        return "BrokerCall(%s, token #%s, status=%r, problems=%r)" % (self.kind, self.token_seq, self.status,
                                                                     self.problems)


class SiteEntry(object):
    """What the source site answers at one path."""

    def __init__(self, status=200, source=None, content_type=None, etag=None, last_modified=None,
                 location=None, headers=()):
        self.status = status
        self.source = source if source is not None else BytesSource(b"")
        self.content_type = content_type
        self.etag = etag
        self.last_modified = last_modified
        self.location = location
        self.headers = list(headers)

    def response_headers(self):
        out = []
        if self.content_type is not None:
            out.append(("Content-Type", self.content_type))
        if self.etag is not None:
            out.append(("ETag", self.etag))
        if self.last_modified is not None:
            out.append(("Last-Modified", self.last_modified))
        if self.location is not None:
            out.append(("Location", self.location))
        return out + self.headers


class SourceHop(object):
    """One request the source site answered: the exchange, what was sent back
    (headers before the server's own Date/Server/Content-Length), the TLS
    version and the local address the node had connected to, and the names of
    any secrets found in its target or headers."""

    def __init__(self, exchange, target, entry, tls_version, address, leaked, header_names):
        self.exchange = exchange
        self.target = target
        self.entry = entry
        self.tls_version = tls_version
        self.address = address
        self.leaked = leaked
        self.header_names = header_names

    def first_header(self, name):
        if self.entry is None:
            return None
        name = name.lower()
        for k, v in self.entry.response_headers():
            if k.lower() == name:
                return v
        return None

    def __repr__(self):
        return "SourceHop(%s -> %s)" % (self.target, self.entry.status if self.entry else 404)


class GeneratedJsonl(object):
    """``size_bytes`` of JSON lines made on the fly, never held whole.

    Line i is ``{"i": i,<spaces> "s": "row-i"}`` padded with insignificant
    whitespace to ``line_bytes`` (the last line takes the remainder), so a source
    of hundreds of MiB normalises to a result of a few hundred KiB: the
    streaming checks measure the node, not the result's size. A body source for
    LoopbackServer (length, iter_blocks, send_range).
    """

    def __init__(self, size_bytes, line_bytes=GENERATED_LINE_BYTES):
        if line_bytes < 64:
            raise ValueError("line_bytes must be at least 64")
        self.length = int(size_bytes)
        self.line_bytes = line_bytes
        self.lines = max(1, self.length // line_bytes)
        if self.length < 48:
            raise ValueError("a generated JSON-lines source needs at least 48 bytes")
        self._sha256 = None

    def _line(self, index):
        size = self.line_bytes
        if index == self.lines - 1:
            size = self.length - self.line_bytes * (self.lines - 1)
        head = b'{"i":%d,' % index
        tail = b'"s":"row-%d"}\n' % index
        return head + b" " * (size - len(head) - len(tail)) + tail

    def iter_blocks(self, start, end, max_block):
        index = min(start // self.line_bytes, self.lines - 1)
        offset = start - index * self.line_bytes
        while start < end:
            line = self._line(index)
            piece = line[offset:offset + (end - start)]
            for i in range(0, len(piece), max_block):
                yield memoryview(piece)[i:i + max_block]
            start += len(piece)
            index += 1
            offset = 0

    def send_range(self, conn, start, end, progress):
        batch = bytearray()
        for block in self.iter_blocks(start, end, IO_BLOCK_BYTES):
            batch += block
            if len(batch) >= IO_BLOCK_BYTES:
                conn.send(batch)
                progress(len(batch))
                batch = bytearray()
        if batch:
            conn.send(batch)
            progress(len(batch))

    def sha256(self):
        if self._sha256 is None:
            h = hashlib.sha256()
            for block in self.iter_blocks(0, self.length, IO_BLOCK_BYTES):
                h.update(block)
            self._sha256 = h.hexdigest()
        return self._sha256


def _blocks_of(source):
    return source.iter_blocks(0, source.length, IO_BLOCK_BYTES)


# ---------------------------------------------------------------- the plane

# How long a crawler run may take before the harness kills it. The longest
# run any check expects is about 15 s (a cancelled PUT waiting out the 8 s
# grace; a 96 MiB source on a loaded machine); a node stuck past every
# deadline it was given is killed here and its check fails, so a mutant that
# ignores a deadline costs 30 s, not the generic minute.
CRAWLER_RUN_TIMEOUT_S = 30.0


# The name every development line must carry: a node talking plain HTTP to a
# store says so once, first on stderr (CRAWLER-CONFIG-4, D19).
DEVELOPMENT_NOTE_MARK = "STORAGE_EMULATOR_HOST"


class CrawlerPlane(object):
    """See the module docstring. Every keyword has a default that makes a small
    successful run; a check changes only what it is about.

    Source:     source (bytes or a body source such as GeneratedJsonl),
                source_path, source_content_type, source_etag,
                source_last_modified, source_headers, source_faults.
    Request:    source_url (default https://localhost:<port><source_path>),
                data_format, filename, limits, source_id, requested_at,
                attestation (default: the policy's digest), request_patch(doc).
    Capability: url_expires_s (X-Goog-Expires), expires_in_s (expires_at from
                the redemption; default url_expires_s), url_issued_offset_s
                (X-Goog-Date from now), capability_patch(cap).
    Bootstrap:  bootstrap_patch(doc), bootstrap_raw (bytes, or callable(doc) ->
                bytes), redeem_status/redeem_body (answer instead of the
                bootstrap), redeem_faults, fail_status/fail_body, fail_faults.
    Identity:   identity_status, identity_body, identity_faults.
    Policy:     policy (a document, or callable(plane) -> document, for ports
                known only once the servers exist), policy_raw (the
                variable's text). source_url may be callable(plane) too.
    Store:      store_faults; store_plain_http (the store speaks plain HTTP, as
                a stock emulator does, and STORAGE_EMULATOR_HOST is http://...).
    TLS:        untrusted (names among "broker", "site", "store": those serve a
                self-signed certificate nobody trusts); misnamed (the same
                names: those serve a certificate whose chain the node trusts
                but which names another host, misnamed.invalid).
    Node:       timeouts {"bootstrap"|"fetch"|"child"|"upload": seconds},
                child (a crawler_child behaviour), extra_env, drop_env.
    Faults are Fault or (Fault, Match); without a Match they hit every request
    of that route.
    """

    _count = 0

    def __init__(self, ctx, source=DEFAULT_SOURCE, source_path=SOURCE_PATH, source_content_type=None,
                 source_etag=None, source_last_modified=None, source_headers=(), source_faults=(),
                 source_url=None, data_format=None, filename=None, limits=None, source_id=None,
                 requested_at=None, attestation=None, request_patch=None,
                 url_expires_s=900, expires_in_s=None, url_issued_offset_s=0, capability_patch=None,
                 bootstrap_patch=None, bootstrap_raw=None, redeem_status=None, redeem_body=b"",
                 redeem_faults=(), fail_status=204, fail_body=b"", fail_faults=(),
                 identity_status=200, identity_body=None, identity_faults=(),
                 policy=None, policy_raw=None, store_faults=(), timeouts=None, child=None,
                 extra_env=None, drop_env=(), session_id=SESSION_ID, untrusted=(),
                 misnamed=(), store_plain_http=False):
        self.timeouts = dict(timeouts or {})
        unknown = set(self.timeouts) - {"bootstrap", "fetch", "child", "upload"}
        if unknown:
            raise ValueError("unknown timeouts: %s" % ", ".join(sorted(unknown)))
        self.ctx = ctx
        self.session_id = session_id
        self.proc = None
        self.result = None
        self._lock = threading.RLock()
        self._minted = {}            # token -> Minted
        self._minted_list = []
        self._identity_requests = []
        self._calls = {}             # broker exchange seq -> BrokerCall
        self._hops = []              # SourceHop, in arrival order
        self._redeemed = False
        self.request = None
        self.capability = None
        self.bootstrap_doc = None
        self.bootstrap_bytes = None
        self.upload_url = None
        self.issued_at = None

        CrawlerPlane._count += 1
        home = "crawler-plane-%d" % CrawlerPlane._count
        self.scratch = ctx.tmpdir(home + "/tmp")
        # What the node trusts: the harness CA, and the CA behind the
        # misnamed certificate when a server serves one (so only its name,
        # not its chain, can be the reason to refuse it).
        self.ca_file = CA_FILE
        if misnamed:
            self.ca_file = os.path.join(ctx.tmpdir(home + "/trust"), "ca-bundle.pem")
            with open(self.ca_file, "wb") as out:
                for path in (OTHER_CA_FILE, CA_FILE):  # the one that matters first, for a reader of one PEM
                    with open(path, "rb") as f:
                        out.write(f.read())
        self.child_dir = ctx.tmpdir(home + "/child")
        seed = getattr(ctx, "seed", 0)
        rng = getattr(ctx, "rng", None)
        self.object_hex = ("%064x" % rng.getrandbits(256)) if rng is not None else _secrets.token_hex(32)
        self.object_name = docs.RESULT_PREFIX + self.object_hex
        self.object_key = "%s/%s" % (BUCKET, self.object_name)

        servers = []
        try:
            unknown = (set(untrusted) | set(misnamed)) - {"broker", "site", "store"}
            if unknown:
                raise ValueError("untrusted or misnamed names no server: %s" % ", ".join(sorted(unknown)))

            def chain(name):  # the certificate the server named `name` serves
                if name in untrusted:
                    return UNTRUSTED_CERT_CHAIN
                return MISNAMED_CERT_CHAIN if name in misnamed else None

            self.store_plain_http = store_plain_http
            self.store = ObjectStore(ctx.tmpdir(home + "/store"), tls=not store_plain_http, seed=seed,
                                     name="crawler-store",
                                     cert_chain=chain("store"))
            servers.append(self.store)
            self.metadata = LoopbackServer("metadata", tls=False, seed=seed, secret_values=self.secrets,
                                           server_header="Metadata Server for VM")
            servers.append(self.metadata)
            self.broker = LoopbackServer("broker", tls=True, seed=seed, secret_values=self.secrets,
                                         server_header="Google Frontend", cert_chain=chain("broker"))
            servers.append(self.broker)
            self.site = LoopbackServer("source", tls=True, seed=seed, secret_values=self.secrets,
                                       cert_chain=chain("site"))
            servers.append(self.site)
            self.tripwire = LoopbackServer("tripwire", tls=True, seed=seed, secret_values=self.secrets)
            servers.append(self.tripwire)
        except BaseException:
            for server in servers:
                server.close()
            raise
        self._servers = servers

        self.policy_raw = policy_raw
        self.request_patch = request_patch
        self.url_expires_s = url_expires_s
        self.expires_in_s = url_expires_s if expires_in_s is None else expires_in_s
        self.url_issued_offset_s = url_issued_offset_s
        self.capability_patch = capability_patch
        self.bootstrap_patch = bootstrap_patch
        self.bootstrap_raw = bootstrap_raw
        self.redeem_status = redeem_status
        self.redeem_body = redeem_body
        self.fail_status = fail_status
        self.fail_body = fail_body
        self.identity_status = identity_status
        self.extra_env = dict(extra_env or {})
        self.drop_env = list(drop_env)

        # Routes, the source, the policy, the faults and the child: the servers
        # exist, so a mistake here must close them before it propagates.
        try:
            self.metadata.route("GET", IDENTITY_PATH, self._handle_identity, raw=True)
            self.broker.route("POST", BROKER_PATH + "/*", self._handle_broker, raw=True)
            self.site.route("GET", "/*", self._handle_source, raw=True)
            self.tripwire.route("*", "/*", lambda req: Reply(418, b"tripwire\n", content_type="text/plain"))

            self._site = {}
            self.source_path = source_path
            if source_content_type is None:
                source_content_type = "application/x-ndjson" if isinstance(source, GeneratedJsonl) else "text/csv"
            self.serve(source_path, source, content_type=source_content_type, etag=source_etag,
                       last_modified=source_last_modified, headers=source_headers)
            if callable(source_url):
                source_url = source_url(self)
            self.source_url = source_url if source_url is not None else self.site_url(source_path)

            self.request_options = {"data_format": data_format, "filename": filename, "limits": limits,
                                    "source_id": source_id, "requested_at": requested_at}
            if isinstance(source, GeneratedJsonl) and data_format is None:
                self.request_options.update(data_format="jsonl", filename=filename or "data.jsonl")
            if callable(policy):  # a policy naming ports that exist only now
                policy = policy(self)
            if policy is None:
                policy = docs.make_policy(["localhost"], [self.site.port], self._loopback_addresses())
            self.policy = policy
            self.identity_body = IDENTITY_VARIANTS[identity_body] if isinstance(identity_body, str) else identity_body

            _fault_rules(self.metadata, identity_faults, lambda: _faults.Match(method="GET"))
            _fault_rules(self.broker, redeem_faults, lambda: _faults.Match(method="POST", key="*:redeem"))
            _fault_rules(self.broker, fail_faults, lambda: _faults.Match(method="POST", key="*:fail"))
            _fault_rules(self.site, source_faults, lambda: _faults.Match(method="GET"))
            _fault_rules(self.store, store_faults, lambda: _faults.Match(method="PUT"))

            self.child_path = None
            self.child_record_path = None
            if child is not None:
                self.write_child(child)
            self.attestation = attestation if attestation is not None else docs.digest(policy)
        except BaseException:
            self.close()
            raise

    # ---------------------------------------------------------------- arrange
    @staticmethod
    def _loopback_addresses():
        """The addresses "localhost" resolves to here (127.0.0.1, and ::1 where
        the resolver offers it): every one must be allowed, or FETCH-3 denies."""
        found = ["127.0.0.1"]
        try:
            for info in socket.getaddrinfo("localhost", 443, 0, socket.SOCK_STREAM):
                address = info[4][0]
                if address not in found:
                    found.append(address)
        except OSError:
            pass
        return found

    def site_url(self, path="/", host="localhost"):
        """URL of path on the source site, as the node must reach it."""
        return "https://%s:%d%s" % (host, self.site.port, path)

    def tripwire_url(self, path="/", scheme="https", host="127.0.0.1"):
        """A URL on the tripwire (plain http reaches it too: the connection counts)."""
        return "%s://%s:%d%s" % (scheme, host, self.tripwire.port, path)

    def serve(self, path, data=b"", content_type="application/octet-stream", etag=None, last_modified=None,
              status=200, headers=()):
        """GET path (the request target, query included if any) answers data
        (bytes, or a body source such as GeneratedJsonl)."""
        source = BytesSource(data) if isinstance(data, (bytes, bytearray)) else data
        with self._lock:
            self._site[path] = SiteEntry(status, source, content_type, etag, last_modified, None, headers)
        return self.site_url(path)

    def redirect(self, path, location, status=302, headers=()):
        """GET path answers status with Location: location (as given: relative or absolute)."""
        with self._lock:
            self._site[path] = SiteEntry(status, BytesSource(b""), None, None, None, location, headers)
        return self.site_url(path)

    def generated_jsonl(self, size_bytes, path="/data.jsonl", line_bytes=GENERATED_LINE_BYTES,
                        content_type="application/x-ndjson"):
        """Serve a streamed GeneratedJsonl of size_bytes at path; returns its URL."""
        return self.serve(path, GeneratedJsonl(size_bytes, line_bytes), content_type=content_type)

    def identity_fault(self, fault, **match):
        return self.metadata.add_fault(fault, _faults.Match(**dict({"method": "GET"}, **match)))

    def redeem_fault(self, fault, **match):
        return self.broker.add_fault(fault, _faults.Match(**dict({"method": "POST", "key": "*:redeem"}, **match)))

    def fail_fault(self, fault, **match):
        return self.broker.add_fault(fault, _faults.Match(**dict({"method": "POST", "key": "*:fail"}, **match)))

    def source_fault(self, fault, path=None, **match):
        defaults = {"method": "GET"}
        if path is not None:
            defaults["key"] = path
        return self.site.add_fault(fault, _faults.Match(**dict(defaults, **match)))

    def store_fault(self, fault, **match):
        return self.store.add_fault(fault, _faults.Match(**dict({"method": "PUT"}, **match)))

    def write_child(self, behaviour):
        """Write the scripted normaliser and pin it (MOSTLYRIGHT_CRAWLER_CHILD)."""
        from conformance.planes import crawler_child
        behaviour = dict(behaviour)
        behaviour.setdefault("record", os.path.join(self.child_dir, "record.json"))
        self.child_record_path = behaviour["record"]
        self.child_path = crawler_child.write_child(os.path.join(self.child_dir, "normaliser"), behaviour)
        return self.child_path

    def env(self):
        """The node's whole environment (nothing is inherited)."""
        policy_text = self.policy_raw if self.policy_raw is not None else docs.canonical(self.policy).decode("utf-8")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "TMPDIR": self.scratch,
            "SSL_CERT_FILE": self.ca_file,
            "GCE_METADATA_HOST": "127.0.0.1:%d" % self.metadata.port,
            "STORAGE_EMULATOR_HOST": self.store.origin,
            "MOSTLYRIGHT_CRAWLER_RESULTS_BUCKET": BUCKET,
            "MOSTLYRIGHT_CRAWLER_BOOTSTRAP_URL_BASE": self.broker.origin + BROKER_PATH,
            "MOSTLYRIGHT_CRAWLER_BOOTSTRAP_AUDIENCE_BASE": AUDIENCE_BASE,
            "MOSTLYRIGHT_CRAWLER_EGRESS_POLICY": policy_text,
            "CLOUD_RUN_EXECUTION": EXECUTION,
        }
        for name, value in self.timeouts.items():
            env["MOSTLYRIGHT_CRAWLER_%s_TIMEOUT_S" % name.upper()] = _timeout_text(value)
        if self.child_path is not None:
            env["MOSTLYRIGHT_CRAWLER_CHILD"] = self.child_path
        env.update(self.extra_env)
        for name in self.drop_env:
            env.pop(name, None)
        return env

    def args(self):
        return ["--crawler-session-id", self.session_id]

    # ---------------------------------------------------------------- audiences and the bootstrap
    def audience(self, route="redeem"):
        return "%s/%s:%s" % (AUDIENCE_BASE, self.session_id, route)

    def bootstrap(self):
        """Build the bootstrap response now (the broker does it at the first valid
        redemption). Idempotent; returns the raw bytes the broker answers."""
        with self._lock:
            if self.bootstrap_bytes is None:
                self._build_bootstrap()
            return self.bootstrap_bytes

    def _build_bootstrap(self):
        options = dict((k, v) for k, v in self.request_options.items() if v is not None)
        request = docs.make_request(self.source_url, self.attestation, **options)
        if self.request_patch is not None:
            patched = self.request_patch(request)
            request = patched if patched is not None else request
        # Whole seconds: X-Goog-Date has no fraction, and expires_at must not
        # pass X-Goog-Date + X-Goog-Expires (CRAWLER-CAP-8).
        now = int(time.time())
        self.issued_at = now + self.url_issued_offset_s
        try:
            headers = docs.required_headers(self.session_id, request)
        except Exception:
            # A patched request the helpers cannot digest: sign the unpatched one's headers.
            headers = docs.required_headers(self.session_id, docs.make_request(self.source_url, self.attestation,
                                                                               **options))
        self.upload_url = self.store.sign_put(BUCKET, self.object_name, headers,
                                              expires_in_s=self.url_expires_s, issued_at=self.issued_at)
        capability = docs.make_capability(self.session_id, request, self.upload_url,
                                          expires_at=docs.utc_text(now + self.expires_in_s))
        if self.capability_patch is not None:
            patched = self.capability_patch(capability)
            capability = patched if patched is not None else capability
        doc = {"schema_version": docs.BOOTSTRAP_SCHEMA, "crawler_session_id": self.session_id,
               "request": request, "upload_capability": capability}
        if self.bootstrap_patch is not None:
            patched = self.bootstrap_patch(doc)
            doc = patched if patched is not None else doc
        self.request, self.capability, self.bootstrap_doc = request, capability, doc
        if self.bootstrap_raw is None:
            raw = json.dumps(doc).encode("utf-8")
        elif callable(self.bootstrap_raw):
            raw = self.bootstrap_raw(doc)
        else:
            raw = self.bootstrap_raw
        self.bootstrap_bytes = bytes(raw)

    def request_digest(self):
        """Digest of the request the broker served (None before the redemption)."""
        return docs.digest(self.request) if isinstance(self.request, dict) else None

    # ---------------------------------------------------------------- handlers
    @staticmethod
    def _read_body(ctx, limit=MAX_RECORDED_BODY_BYTES):
        """The request body's first `limit` bytes; the rest is read and dropped."""
        kept = bytearray()
        mv = memoryview(bytearray(65536))
        while True:
            n = ctx.body.readinto(mv)
            if not n:
                break
            if len(kept) < limit:
                kept += mv[:min(n, limit - len(kept))]
        ctx.body_finished()
        return bytes(kept)

    def _mint(self, audience):
        with self._lock:
            seq = len(self._minted_list) + 1
            marker = "CANARY" + _secrets.token_hex(16)
            header = {"alg": "RS256", "kid": "conformance-%s" % _secrets.token_hex(8), "typ": "JWT"}
            now = int(time.time())
            payload = {"aud": audience, "azp": "100000000000000000001",
                       "email": "crawler-job@conformance.iam.gserviceaccount.com", "email_verified": True,
                       "exp": now + 3600, "iat": now, "iss": "https://accounts.google.com",
                       "sub": "100000000000000000001", "conformance_seq": seq, "conformance_marker": marker}
            token = b".".join([_b64url(json.dumps(header).encode()), _b64url(json.dumps(payload).encode()),
                               _b64url(os.urandom(256))]).decode("ascii")
            minted = Minted(seq, audience, token, marker)
            self._minted[token] = minted
            self._minted_list.append(minted)
            return minted

    def _handle_identity(self, ctx):
        req = ctx.request
        record = IdentityRequest(ctx.exchange, req)
        record.body_bytes = len(self._read_body(ctx))
        with self._lock:
            self._identity_requests.append(record)
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
        ctx.respond(self.identity_status, headers, body=body)

    def _handle_broker(self, ctx):
        req = ctx.request
        body = self._read_body(ctx)
        name = req.path[len(BROKER_PATH) + 1:]
        kind = None
        if name == self.session_id + ":redeem":
            kind = "redeem"
        elif name == self.session_id + ":fail":
            kind = "fail"
        call = BrokerCall(kind or "other", ctx.exchange, req, body)
        with self._lock:
            self._calls[ctx.exchange.seq] = call
        self._check_token(call, kind)
        if kind == "redeem":
            self._check_redeem_shape(call)
        elif kind == "fail":
            self._check_fail_shape(call)
        ctx.note(kind=call.kind, token_seq=call.token_seq, problems=list(call.problems))
        if ctx.refused:
            call.status = "fault"
            ctx.respond(500)  # replaced by the fault's answer
            return
        json_type = [("Content-Type", "application/json; charset=utf-8")]
        if kind is None:
            call.status = 404
            call.refusal = "no such route"
            ctx.respond(404, json_type, body=b'{"error": {"code": 404, "message": "not found"}}')
            return
        if call.refusal is not None:
            call.status = 401 if call.refusal.startswith("token") else 400
            ctx.respond(call.status, json_type, body=json.dumps(
                {"error": {"code": call.status, "message": call.refusal}}).encode())
            return
        if kind == "fail":
            call.status = self.fail_status
            ctx.respond(self.fail_status, [] if not self.fail_body else json_type, body=self.fail_body)
            return
        with self._lock:
            already = self._redeemed
            self._redeemed = True
        if already:
            call.status = 409
            call.refusal = "bootstrap already redeemed"
            ctx.respond(409, json_type, body=b'{"error": {"code": 409, "message": "already redeemed"}}')
            return
        if self.redeem_status is not None:
            call.status = self.redeem_status
            ctx.respond(self.redeem_status, json_type if self.redeem_body else [], body=self.redeem_body)
            return
        raw = self.bootstrap()
        call.status = 200
        ctx.respond(200, json_type, body=raw)

    def _check_token(self, call, kind):
        auth = call.header_all("authorization")
        token = None
        if len(auth) == 1 and auth[0].startswith("Bearer "):
            token = auth[0][len("Bearer "):]
        with self._lock:
            minted = self._minted.get(token) if token else None
            if minted is not None:
                call.token_seq = minted.seq
                fresh = not minted.presented
                minted.presented.append((call.kind, call.exchange.seq))
        if not auth:
            call.refusal = "token missing (no Authorization header)"
        elif token is None:
            call.refusal = "token malformed (Authorization is not one 'Bearer <token>')"
        elif minted is None:
            call.refusal = "token unknown (not minted by the metadata server)"
        elif kind is not None and minted.audience != self.audience(kind):
            call.refusal = "token minted for another audience"
        elif not fresh:
            call.refusal = "token presented before (tokens are single-use here)"
        if call.refusal is not None:
            call.problems.append(call.refusal)

    def _check_redeem_shape(self, call):
        execution = call.header_all("x-mostlyright-cloud-run-execution")
        if execution != [EXECUTION]:
            call.problems.append("execution header %s" % ("missing" if not execution else "differs"))
            if call.refusal is None:
                call.refusal = "execution header missing or wrong"
        if call.header("accept") != "application/json":
            call.problems.append("Accept is not application/json")
        if call.body or call.chunked or call.content_length != 0:
            call.problems.append("not an empty body with Content-Length: 0")
        if call.has_query:
            call.problems.append("a query string")

    def _check_fail_shape(self, call):
        if call.header("x-mostlyright-cloud-run-execution") is not None:
            call.problems.append("execution header sent on :fail")
        if call.header("accept") != "application/json":
            call.problems.append("Accept is not application/json")
        if call.header("content-type") != "application/json":
            call.problems.append("Content-Type is not application/json")
        if not call.canonical:
            call.problems.append("body is not canonical JSON")
        elif not (isinstance(call.doc, dict) and list(call.doc) == ["failure_code"]):
            call.problems.append("body is not exactly {\"failure_code\": ...}")

    def _handle_source(self, ctx):
        req = ctx.request
        self._read_body(ctx)
        sock = ctx.conn.sock
        try:
            tls_version = sock.version()
        except (AttributeError, OSError, ValueError):
            tls_version = None
        try:
            address = sock.getsockname()[0]
        except OSError:
            address = None
        secrets = self.secrets()
        seen = req.target + "\n" + "\n".join("%s: %s" % pair for pair in req.headers)
        hits = []
        for secret in sorted(secrets, key=len, reverse=True):
            if secret in seen and not any(secret in hit for hit in hits):
                hits.append(secret)
        leaked = [self.describe_secret(secret) for secret in hits]
        with self._lock:
            entry = self._site.get(req.target) or self._site.get(req.raw_path)
        hop = SourceHop(ctx.exchange, req.target, entry, tls_version, address, leaked,
                        [name for name, _ in req.headers])
        with self._lock:
            self._hops.append(hop)
        ctx.note(tls_version=tls_version, address=address, leaked=leaked)
        if ctx.refused:
            ctx.respond(500)  # replaced by the fault's answer
            return
        if entry is None:
            ctx.respond(404, [("Content-Type", "text/plain")], body=b"not found\n")
            return
        ctx.respond(entry.status, entry.response_headers(), source=entry.source)

    # ---------------------------------------------------------------- act
    def start(self, pid1=True, memory_limit_bytes=None, args=None):
        """Start the node with env() and (by default) the session argument."""
        self.proc = self.ctx.start_node(self.env(), args=self.args() if args is None else list(args),
                                        pid1=pid1, memory_limit_bytes=memory_limit_bytes)
        return self.proc

    def wait(self, proc=None, timeout=CRAWLER_RUN_TIMEOUT_S):
        proc = proc or self.proc
        self.result = proc.wait(timeout)
        self.ctx.note("node: %s" % self.result.describe())
        return self.result

    def run(self, timeout=CRAWLER_RUN_TIMEOUT_S, **start):
        """start() then wait(): for checks that only arrange things beforehand."""
        self.start(**start)
        return self.wait(timeout=timeout)

    def stop_when(self, condition, signum=signal.SIGTERM, timeout=CRAWLER_RUN_TIMEOUT_S, what="the trigger",
                  settle_s=0.0):
        """Send signum to the node settle_s after condition() first holds (polled
        every POLL_INTERVAL_S). Returns the monotonic time the signal went out;
        the check fails when the node never got there (or exited first)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if not self.proc.running():
                self.ctx.fail(expected="the node to reach %s" % what,
                              actual="it exited first (%s)" % self.describe_exchanges(),
                              diagnosis="the run never reached the phase this check stops it in")
            if time.monotonic() > deadline:
                self.ctx.fail(expected="the node to reach %s" % what,
                              actual="it did not within %.0f s (%s)" % (timeout, self.describe_exchanges()),
                              diagnosis="the run never reached the phase this check stops it in")
            time.sleep(POLL_INTERVAL_S)
        if settle_s:
            time.sleep(settle_s)
        sent = time.monotonic()
        self.proc.signal(signum)
        self.ctx.note("plane: sent signal %d at %s" % (signum, what))
        return sent

    def signal(self, signum=signal.SIGTERM):
        """Send a signal now (a second stop, say); returns its monotonic time."""
        sent = time.monotonic()
        self.proc.signal(signum)
        self.ctx.note("plane: sent signal %d" % signum)
        return sent

    def stop_latency(self):
        """Seconds from the first signal to the node's exit (None without a signal)."""
        return self.result.stop_latency_s if self.result is not None else None

    # -- trigger predicates: each returns a callable for stop_when
    def identity_started(self, n=1):
        return lambda: len(self.metadata.transcript) >= n

    def redeem_started(self):
        return lambda: any(ex.path.endswith(":redeem") for ex in self.broker.transcript)

    def fail_started(self):
        return lambda: any(ex.path.endswith(":fail") for ex in self.broker.transcript)

    def source_started(self, path=None):
        return lambda: any(path is None or ex.path == path for ex in self.site.transcript)

    def source_bytes_sent(self, n, path=None):
        """The source has sent at least n body bytes of one answer."""
        return lambda: any(ex.resp_bytes >= n and (path is None or ex.path == path) for ex in self.site.transcript)

    def child_started(self):
        """The scripted child wrote its record, or a child of the node runs."""
        def started():
            if self.child_record_path is not None and os.path.exists(self.child_record_path):
                return True
            return bool(self.child_pids())
        return started

    def put_started(self):
        return lambda: any(ex.method == "PUT" for ex in self.store.transcript)

    def put_body_done(self):
        return lambda: any(ex.method == "PUT" and ex.t_body_done is not None for ex in self.store.transcript)

    def child_pids(self):
        """Host pids of the node's descendants that look like a normaliser."""
        if self.proc is None or not self.proc.running():
            return []
        found = []
        for pid in _runner.descendants(self.proc.host_pid):
            argv = _runner.read_cmdline(pid) or []
            if "--input-fd" in argv or (self.child_path is not None and self.child_path in argv):
                found.append(pid)
        return found

    # ---------------------------------------------------------------- observe
    def status_line(self):
        """(code, status) when stderr is exactly one canonical status line, else None."""
        parsed, _problem = self._parse_status()
        return parsed

    def status_problem(self):
        """Why stderr is not one canonical status line (None when it is, or is empty)."""
        return self._parse_status()[1]

    def stderr_text(self):
        return self.result.stderr if self.result is not None else self.proc.stderr_text()

    def _parse_status(self):
        """((code, status) or None, problem or None) for the run's stderr."""
        text = self.result.stderr if self.result is not None else ""
        if self.store_plain_http:
            note, _, rest = text.partition("\n")
            if DEVELOPMENT_NOTE_MARK in note and not note.startswith("{"):
                text = rest  # the one development line CRAWLER-CONFIG-4 asks for (D19), before anything else
        if text == "":
            return None, None
        if not text.endswith("\n") or text.count("\n") != 1:
            return None, "stderr is not exactly one line ending in a newline"
        line = text[:-1].encode("utf-8", "surrogateescape")
        try:
            doc = docs.parse_canonical(line)
        except docs.JsonError:
            return None, "the line is not canonical JSON"
        if not isinstance(doc, dict) or sorted(doc) != ["code", "status"]:
            return None, "the line is not exactly {\"code\", \"status\"}"
        if doc["status"] not in ("failed", "reported") or not isinstance(doc["code"], str):
            return None, "status is not \"failed\" or \"reported\""
        return (doc["code"], doc["status"]), None

    def identity_requests(self):
        """Every request the identity path handled (IdentityRequest), in order."""
        with self._lock:
            return list(self._identity_requests)

    def tokens(self):
        """Every token minted (Minted), in order."""
        with self._lock:
            return list(self._minted_list)

    def _broker_calls(self, suffix):
        out = []
        for ex in self.broker.transcript:
            if not ex.path.endswith(suffix):
                continue
            with self._lock:
                call = self._calls.get(ex.seq)
            if call is None:
                # A request-phase fault answered before the broker saw it.
                call = BrokerCall(suffix[1:], ex, _BareRequest(), b"")
                call.status = "fault"
            out.append(call)
        return out

    def redeems(self):
        """Every POST to <sid>:redeem (BrokerCall), in arrival order."""
        return self._broker_calls(":redeem")

    def fails(self):
        """Every POST to <sid>:fail (BrokerCall; .doc is the parsed body)."""
        return self._broker_calls(":fail")

    def source_requests(self):
        """Every request the source site received (SourceHop), in order."""
        with self._lock:
            return list(self._hops)

    def puts(self):
        """Store PUT exchanges (headers in arrival order, query masked)."""
        return [ex for ex in self.store.transcript if ex.method == "PUT"]

    def tripwire_connections(self):
        return self.tripwire.connections

    def describe_exchanges(self, limit=12):
        events = []
        for name, server in (("metadata", self.metadata), ("broker", self.broker), ("source", self.site),
                             ("store", self.store), ("tripwire", self.tripwire)):
            for ex in server.transcript:
                events.append((ex.t_start, "%s %s %s -> %s%s" % (
                    name, ex.method, ex.path, ex.status or "-",
                    " (%s)" % ex.outcome if ex.outcome not in (None, "ok") else "")))
        events.sort(key=lambda item: item[0])
        return "; ".join(text for _t, text in events[-limit:]) or "no requests"

    def stored(self):
        """{key: StoredObject} of every object under the bucket's quarantine prefix."""
        prefix = "%s/%s" % (BUCKET, docs.RESULT_PREFIX)
        out = {}
        for key, obj in sorted(self.store.objects().items()):
            if not key.startswith(prefix):
                continue
            with self.store.open_object(key) as handle:
                raw = handle.read(docs.MAX_CRAWLER_RESULT_BYTES + 1)
            try:
                doc = docs.parse_lenient(raw)
            except docs.JsonError:
                doc = None
            out[key] = StoredObject(key, obj, raw, doc)
        return out

    def _stored_with_schema(self, schema):
        for item in self.stored().values():
            if isinstance(item.doc, dict) and item.doc.get("schema_version") == schema:
                return item
        return None

    def stored_result(self):
        """The stored result (StoredObject), or None."""
        return self._stored_with_schema(docs.RESULT_SCHEMA)

    def stored_bundle(self):
        """The stored failure bundle (StoredObject), or None."""
        return self._stored_with_schema(docs.FAILURE_SCHEMA)

    def child_record(self):
        """What the scripted child recorded (a dict), or None."""
        if self.child_record_path is None or not os.path.exists(self.child_record_path):
            return None
        with open(self.child_record_path, "rb") as handle:
            raw = handle.read()
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError:
            return None

    # ---------------------------------------------------------------- the harness's own account of the fetch
    def transport_evidence(self):
        """(evidence document, exact) rebuilt from what the source site served.

        Hop i's URL is the request's URL, then each Location resolved against
        the previous hop's URL (CRAWLER-FETCH-5); status, Content-Type, ETag,
        Last-Modified and Location are the values the site sent; content_length
        the Content-Length the server wrote; peer_address the local address the
        node had connected to; tls_version the version the server negotiated.
        exact is False when a fault changed an answer, a hop had no entry, or
        the requested paths do not follow the URL chain: then only shapes can
        be compared.
        """
        hops = self.source_requests()
        url = self.request["query"]["url"] if isinstance(self.request, dict) else self.source_url
        exact = bool(hops)
        out = []
        for hop in hops:
            entry = hop.entry
            ex = hop.exchange
            if entry is None or ex.fault is not None:
                exact = False
            split = urllib.parse.urlsplit(url)
            expected_target = split.path + ("?" + split.query if split.query else "")
            if expected_target != hop.target:
                exact = False
            status = entry.status if entry is not None else 404
            no_body = status in (204, 304) or 100 <= status < 200
            length = entry.source.length if entry is not None else len(b"not found\n")
            location = hop.first_header("location")
            out.append(docs.make_hop(
                url, status=status, location=location,
                content_type=hop.first_header("content-type") if entry is not None else "text/plain",
                content_length=None if no_body else length,
                etag=hop.first_header("etag"), last_modified=hop.first_header("last-modified"),
                peer_address=hop.address, tls_version=hop.tls_version))
            if location is not None:
                url = urllib.parse.urljoin(url, location)
        final = hops[-1].entry if hops else None
        sha, size = self._source_digest(final.source) if final is not None else (None, None)
        evidence = docs.make_evidence(out, sha, size)
        return evidence, exact

    @staticmethod
    def _source_digest(source):
        if isinstance(source, GeneratedJsonl):
            return source.sha256(), source.length
        h = hashlib.sha256()
        for block in _blocks_of(source):
            h.update(block)
        return h.hexdigest(), source.length

    def served_header(self):
        """(input header, evidence exact, evidence, note): the normalisation
        input a node that fetched what the site served gives its child, built
        from the request this plane served and the harness's own account of the
        fetch; None for the header (with the note saying why) when no result
        may exist (no request served, or the fetch did not end in a 200)."""
        if not isinstance(self.request, dict):
            return None, False, None, "no request was served"
        evidence, exact = self.transport_evidence()
        hops = evidence["hops"]
        if not hops:
            return None, exact, evidence, "the source received no request"
        last = hops[-1]
        if last["status"] != 200 or self.source_requests()[-1].entry is None:
            return None, exact, evidence, "the last hop answered %s, not 200" % last["status"]
        try:
            retrieval = docs.make_retrieval(self.request["query"]["url"], evidence)
            return docs.input_header(self.request, retrieval, docs.clean_room()), exact, evidence, None
        except (KeyError, TypeError, AttributeError) as exc:
            # A request patched out of shape: no result can be bound to it.
            return None, exact, evidence, "the request served is not one a result can restate (%s: %s)" % (
                type(exc).__name__, exc)

    def verify_result(self, raw):
        """Problems (a list of sentences) with raw as the stored result, judged
        as the platform can judge any node's result (docs.result_problems):
        canonical bytes, every field the node knows equal to the harness's own
        account of the request it served and the bytes its site sent, and the
        content's hash, size and summary read off the content itself. The rows'
        values are never compared: they are the normaliser's work. The
        transport evidence digest is compared exactly when the harness could
        rebuild the evidence exactly (no fault on a source answer), else only
        its shape."""
        header, exact, evidence, note = self.served_header()
        if header is None:
            return ["a result was stored but none should exist: %s" % note]
        try:
            return docs.result_problems(raw, header, exact, evidence)
        except (KeyError, TypeError, AttributeError) as exc:
            # A request patched out of shape (its limits, say): no result can be bound to it.
            return ["a result was stored but none should exist: the request served is not one a result "
                    "can restate (%s: %s)" % (type(exc).__name__, exc)]

    def reference_result(self):
        """(canonical bytes of the result the reference normaliser gives, note):
        the harness's own normaliser over the bytes the site served, for the
        example-work checks; None for the bytes (with the note) when it gives
        none (no result may exist, or the reference refuses the source)."""
        header, _exact, _evidence, note = self.served_header()
        if header is None:
            return None, note
        query = self.request["query"]
        try:
            normalizer = docs.Normalizer(query["data_format"], query["limits"])
            for block in _blocks_of(self.source_requests()[-1].entry.source):
                normalizer.feed(bytes(block))
            raw = _as_bytes(docs.build_result(header, normalizer.finish()))
        except docs.NormalizationError as exc:
            return None, "the reference normaliser refuses the source: %s" % exc.code
        if len(raw) > docs.MAX_CRAWLER_RESULT_BYTES:  # CRAWLER-CHILD-11: LIMIT_EXCEEDED, never stored
            return None, "the result would exceed MAX_CRAWLER_RESULT_BYTES"
        return raw, None

    def reference_problems(self, raw):
        """Problems with raw as the reference node's result (example work,
        CRAWLER-NORM-*): verify_result's, then every field that differs from
        the reference normaliser's result for the same bytes."""
        problems = self.verify_result(raw)
        expected_raw, note = self.reference_result()
        if expected_raw is None:
            return problems + ["the reference normaliser gives no result here: %s" % note]
        raw = bytes(raw)
        if expected_raw == raw:
            return problems
        actual, _problems = docs.parse_result(raw)
        diffs = []
        docs.diff("", docs.parse_canonical(expected_raw), actual, diffs)
        out = ["%s: the reference gives %s, got %s" % (path or "(top)", _short(want), _short(got))
               for path, want, got in diffs if not path.endswith("transport_evidence_digest")]
        return problems + (out or ["the result's bytes differ from the reference normaliser's"])

    # ---------------------------------------------------------------- secrets
    def secrets(self):
        """Every value whose appearance outside its one place is a leak: each
        minted token, its signature and payload segments and its marker; every
        signature and key the store issued; the capability URL and its signed
        query; the raw bootstrap response."""
        values = []
        with self._lock:
            minted = list(self._minted_list)
            upload_url = self.upload_url
            bootstrap = self.bootstrap_bytes
        for item in minted:
            parts = item.token.split(".")
            values += [item.token, parts[1], parts[2], item.marker]
        values += [v for v in self.store.secrets() if isinstance(v, str)]
        if upload_url:
            values += [upload_url, upload_url.split("?", 1)[-1]]
        if bootstrap:
            values.append(bootstrap.decode("utf-8", "replace"))
        return [v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_CHARS]

    def describe_secret(self, secret):
        """Name a leaked value without repeating it (reports are logs too)."""
        with self._lock:
            for item in self._minted_list:
                if secret == item.token:
                    return "identity token #%d" % item.seq
                if secret == item.marker:
                    return "the marker of identity token #%d" % item.seq
                if secret in item.token:
                    return "a segment of identity token #%d" % item.seq
            if self.upload_url and secret == self.upload_url:
                return "the signed upload URL"
            if self.upload_url and secret == self.upload_url.split("?", 1)[-1]:
                return "the signed upload URL's query"
            if self.bootstrap_bytes and secret == self.bootstrap_bytes.decode("utf-8", "replace"):
                return "the raw bootstrap response"
        return "a store signature or key (%d characters)" % len(secret)

    # ---------------------------------------------------------------- invariants
    def invariants(self):
        """What must hold after any run, whatever the check was about.

        Fakes that broke raise HarnessError (ERROR, never the node's FAIL).
        Always: no secret in a source request, a :fail body or a stored object;
        no connection to the tripwire; at most one :redeem and one :fail, the
        :fail code one of the three and the status line's; TMPDIR empty.
        After a node run also: no secret in stdout, stderr, the node's or any
        descendant's argv, its environment or the child's record; no
        traceback; stdout empty; exit status 0, 1, 2 or 143; stderr empty or
        one canonical status line with a known code agreeing with the exit
        status; a silent exit 0 leaves a result verify_result accepts; a
        "reported" status leaves the failure bundle of that code; no child
        process left.
        """
        for name, server in (("metadata", self.metadata), ("broker", self.broker), ("source", self.site),
                             ("tripwire", self.tripwire), ("store", self.store)):
            if server.errors:
                raise HarnessError("the fake %s failed while serving the node:\n%s" % (name, server.errors[0]))
        found = []
        found += self._tripwire_invariant()
        found += self._network_secret_invariants()
        found += self._broker_invariants()
        if self.result is not None:
            found += self._output_secret_invariants()
            found += self._output_invariants()
            found += self._outcome_invariants()
            found += self._child_left_invariant()
        found += self._scratch_invariant()
        return found

    def _leak(self, where, secret):
        return Violation("CRAWLER-SECRET-2: secrets stay where they belong",
                         "no token, signed URL or bootstrap text in %s" % where,
                         "%s appears in %s" % (self.describe_secret(secret), where),
                         "a secret may appear only in the Authorization header of its broker call "
                         "or the request line of the PUT")

    def _scan(self, places):
        found = []
        secrets = self.secrets()
        for where, text in places:
            if text is None:
                continue
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            for secret in secrets:
                if secret in text:
                    found.append(self._leak(where, secret))
                    break
        return found

    def _tripwire_invariant(self):
        conns = self.tripwire.connections
        if not conns:
            return []
        return [Violation("no connection to the tripwire",
                          "the tripwire (a redirect, proxy or SSRF target) never receives a connection",
                          "%d connection(s) to the tripwire" % len(conns),
                          "follow no redirect outside the policy and ignore proxy variables "
                          "(CRAWLER-CONFIG-8, CRAWLER-FETCH-2, CRAWLER-IDENTITY-3, CRAWLER-BOOT-2)")]

    def _network_secret_invariants(self):
        found = []
        for hop in self.source_requests():
            if hop.leaked:
                found.append(Violation("CRAWLER-SECRET-2: secrets stay where they belong",
                                       "no secret in a source request",
                                       "%s in the request for %s" % (", ".join(hop.leaked),
                                                                     hop.exchange.path)))
        for index, call in enumerate(self.fails()):
            found += self._scan([(":fail body #%d" % (index + 1), call.body)])
        for key, item in sorted(self.stored().items()):
            found += self._scan([("the stored object %s" % key.rsplit("/", 1)[-1][:12], item.raw)])
        return found

    def _broker_invariants(self):
        found = []
        redeems, fails = self.redeems(), self.fails()
        if len(redeems) > 1:
            found.append(Violation("CRAWLER-BOOT-2: one redemption, never retried", "at most one :redeem POST",
                                   "%d :redeem POSTs" % len(redeems)))
        if len(fails) > 1:
            found.append(Violation("CRAWLER-FAIL-2: one :fail report, never retried", "at most one :fail POST",
                                   "%d :fail POSTs" % len(fails)))
        status = self._parse_status()[0] if self.result is not None else None
        for call in fails:
            code = call.doc.get("failure_code") if isinstance(call.doc, dict) else None
            if code is not None and code not in docs.FAIL_ROUTE_CODES:
                found.append(Violation("CRAWLER-FAIL-1: only three codes on :fail",
                                       "failure_code one of %s" % ", ".join(sorted(docs.FAIL_ROUTE_CODES)),
                                       "failure_code %s" % _short(code)))
            elif code is not None and status is not None and status[0] != code:
                found.append(Violation("CRAWLER-FAIL-2: the status line names the reported code",
                                       "status line code %s" % code, "status line code %s" % status[0]))
        return found

    def _output_secret_invariants(self):
        result = self.result
        places = [("stdout", result.stdout), ("stderr", result.stderr)]
        argvs = dict(result.seen_cmdlines or {})
        if result.cmdline_snapshot is not None:
            argvs.setdefault(result.host_pid, result.cmdline_snapshot)
        for pid, argv in sorted(argvs.items(), key=lambda item: str(item[0])):
            label = "the node's argv" if pid == result.host_pid else "the argv of descendant pid %s" % pid
            places.append((label, "\0".join(argv or [])))
        if result.environ_snapshot is not None:
            places.append(("the node's environment", "\0".join("%s=%s" % kv for kv in
                                                            sorted(result.environ_snapshot.items()))))
        if self.child_record_path is not None and os.path.exists(self.child_record_path):
            with open(self.child_record_path, "rb") as handle:
                places.append(("the child's record (argv, environment, stdin header)", handle.read()))
        return self._scan(places)

    def _output_invariants(self):
        result = self.result
        found = []
        for stream in ("stdout", "stderr"):
            if "Traceback (most recent call last)" in (getattr(result, stream) or ""):
                found.append(Violation("CRAWLER-REPORT-5: no traceback", "no traceback on %s" % stream,
                                       "a Python traceback was printed on %s" % stream))
        if result.stdout:
            found.append(Violation("CRAWLER-REPORT-3: stdout stays empty", "empty stdout",
                                   "%d bytes on stdout: %s" % (len(result.stdout), _short(result.stdout))))
        if _harness_killed(result):
            return found
        if result.exit_code not in (0, 1, 2, 143):
            found.append(Violation("CRAWLER-REPORT-4: exit statuses", "exit status 0, 1, 2 or 143",
                                   "exit status %s" % result.exit_code))
        if result.exit_code == 2:
            return found  # a usage error prints its usage text instead (CRAWLER-ARGV-1)
        parsed, problem = self._parse_status()
        if problem is not None:
            found.append(Violation("CRAWLER-REPORT-3: stderr is empty or one status line",
                                   "empty stderr, or exactly one canonical {\"code\",\"status\"} line and \\n",
                                   "%s: %s" % (problem, _short(result.stderr))))
        elif parsed is not None and parsed[0] not in docs.ALL_CODES:
            found.append(Violation("CRAWLER-REPORT-1: a code not in the table is never produced",
                                   "a code of CRAWLER-REPORT-1", "code %s" % _short(parsed[0])))
        elif parsed is not None:
            found += self._status_agrees(parsed)
        elif result.exit_code in (1, 143):
            found.append(Violation("CRAWLER-REPORT-3: a run that does not succeed says why",
                                   "with exit %s, one status line on stderr" % result.exit_code,
                                   "empty stderr"))
        return found

    def _status_agrees(self, parsed):
        """The status line and the exit status tell one story (CRAWLER-REPORT-2/4, STOP-2..4, D13)."""
        code, status = parsed
        exit_code = self.result.exit_code
        allowed = {
            0: status == "reported" and code != "CRAWLER_CANCELLED",   # D13: a stop exits 143
            1: status == "failed",
            143: code == "CRAWLER_CANCELLED",
        }
        if exit_code in allowed and not allowed[exit_code]:
            expected = {0: "status \"reported\" of a code other than CRAWLER_CANCELLED (or no line)",
                        1: "status \"failed\"",
                        143: "code CRAWLER_CANCELLED"}[exit_code]
            return [Violation("CRAWLER-REPORT-4: the exit status agrees with the status line",
                              "with exit %s, %s" % (exit_code, expected),
                              "exit %s with %s/%s" % (exit_code, code, status))]
        return []

    def _outcome_invariants(self):
        """What the store holds agrees with what the node says."""
        result = self.result
        if _harness_killed(result) or result.exit_code == 2:
            return []
        found = []
        parsed, problem = self._parse_status()
        if result.exit_code == 0 and result.stderr == "":
            stored = self.stored_result()
            if stored is None:
                found.append(Violation("CRAWLER-REPORT-4: exit 0 means the result was stored",
                                       "a stored result after a silent exit 0",
                                       "no result in the store (%s)" % self.describe_exchanges()))
            else:
                problems = self.verify_result(stored.raw)
                if problems:
                    found.append(Violation("CRAWLER-RESULT-*: the stored result is what was fetched",
                                           "a stored result that restates the fetch and whose summary "
                                           "matches its own content",
                                           "; ".join(problems[:6]) + (" (and %d more)" % (len(problems) - 6)
                                                                      if len(problems) > 6 else ""),
                                           "the node stored a result that does not restate its fetch"))
        if parsed is not None and problem is None and parsed[1] == "reported":
            code = parsed[0]
            bundle = self.stored_bundle()
            expected = _as_bytes(docs.failure_bundle(self.request, code)) if isinstance(self.request, dict) else None
            if bundle is None:
                found.append(Violation("CRAWLER-REPORT-2: \"reported\" means the bundle is stored",
                                       "a stored failure bundle carrying %s" % code,
                                       "no failure bundle in the store (%s)" % self.describe_exchanges()))
            elif expected is not None and bundle.raw != expected:
                found.append(Violation("CRAWLER-REPORT-2: the failure bundle",
                                       "the canonical bundle %s" % expected.decode("utf-8", "replace"),
                                       "stored %s" % _short(bundle.raw.decode("utf-8", "replace"), 300)))
        return found

    def _child_left_invariant(self):
        """CRAWLER-CHILD-10: no normaliser outlives the node.

        The runner only sees the node's own session, and the node puts its child
        in a session of its own, so the plane looks itself: every descendant the
        runner saw while the node ran, and the pid the scripted child recorded
        (a host pid unless the node ran as PID 1, whose namespace dies with it).
        A live process counts only if it still has the same argv and started
        before the node exited (no pid reuse).
        """
        result = self.result
        candidates = dict((pid, argv) for pid, argv in (result.seen_cmdlines or {}).items()
                          if pid != result.host_pid)
        record = self.child_record()
        if isinstance(record, dict) and not result.is_pid1 and isinstance(record.get("pid"), int):
            candidates.setdefault(record["pid"], None)
        def left(pid, argv):
            live = _runner.read_cmdline(pid)
            if not live:
                return None
            if argv is not None and live != argv:
                return None
            if argv is None and not (self.child_path and self.child_path in live):
                return None
            return live if _alive_since_before(pid, result.t_exit) else None

        found = []
        grace_end = (result.t_exit or time.monotonic()) + CHILD_EXIT_GRACE_S
        for pid, argv in sorted(candidates.items()):
            live = left(pid, argv)
            while live is not None and time.monotonic() < grace_end:
                time.sleep(POLL_INTERVAL_S)
                live = left(pid, argv)
            if live is None:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            found.append(Violation("CRAWLER-CHILD-10: no child outlives the run",
                                   "no process the node started is running after it exits",
                                   "pid %d (%s) was still running; killed" % (pid, " ".join(live)[:200]),
                                   "kill the child's process group and reap it on every path"))
        return found

    def _scratch_invariant(self):
        found = dir_empty(self.scratch, name="CRAWLER-STREAM-3: TMPDIR left empty")
        return found

    def close(self):
        """Close every server (each closes even if another fails)."""
        errors = []
        for server in reversed(self._servers):
            try:
                server.close()
            except Exception as exc:  # keep closing the others
                errors.append("%s: %s" % (type(exc).__name__, exc))
        if errors:
            raise HarnessError("closing the crawler plane: " + "; ".join(errors))


def _harness_killed(result):
    """The harness ended the run with SIGKILL (a timeout, or a check's own
    kill): the node had no say in its exit status or its stderr."""
    return (result.timed_out or result.killed
            or any(signum == signal.SIGKILL for _t, signum in (result.signals or ())))


class _BareRequest(object):
    """Stands in for a request the broker never saw (a request-phase fault)."""
    headers = ()
    raw_path = ""
    has_query = False
    content_length = None
    chunked = False


def _alive_since_before(pid, t_exit):
    """True when pid is a live non-zombie that started before monotonic t_exit."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            stat = handle.read()
    except OSError:
        return False
    fields = stat[stat.rfind(")") + 2:].split()
    if not fields or fields[0] in ("Z", "X"):
        return False
    if t_exit is None:
        return True
    try:
        ticks = int(fields[19])
        boot_now = time.clock_gettime(time.CLOCK_BOOTTIME)
    except (IndexError, ValueError, AttributeError, OSError):
        return True
    started_boot = ticks / float(os.sysconf("SC_CLK_TCK"))
    exit_boot = boot_now - (time.monotonic() - t_exit)
    return started_boot <= exit_boot + START_TIME_SLACK_S


def _short(value, limit=120):
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=repr)
    return text if len(text) <= limit else text[:limit] + "..."


def make_plane(ctx, *args, **kwargs):
    return CrawlerPlane(ctx, *args, **kwargs)


Plane = CrawlerPlane
