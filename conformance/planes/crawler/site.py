"""The source site and the tripwire (CRAWLER-FETCH-*).

**Source site** (HTTPS, reached as ``https://localhost:<port>``): the source
bytes at ``/data.csv``; ``serve``, ``redirect``, ``generated_jsonl`` add more.
Every hop records the TLS version and the address it was served on, and any
secret found in its target or headers, so the site can rebuild the node's
transport evidence (CRAWLER-FETCH-8) and the plane can find a leak.

**Tripwire** (HTTPS, any path): redirects, proxies and SSRF targets point here;
any connection to it breaks an invariant.
"""

import hashlib
import threading
import urllib.parse

from conformance.faults import Match
from conformance.invariants import Violation
from conformance.planes import crawler_docs as docs
from conformance.planes.crawler.base import DEFAULT_SOURCE, SOURCE_PATH, Fake, read_body
from conformance.servers import IO_BLOCK_BYTES, BytesSource, LoopbackServer, Reply

__all__ = ["SourceSite", "Tripwire", "GeneratedJsonl", "SiteEntry", "SourceHop", "blocks_of"]

# Length of one generated JSON line (GeneratedJsonl): mostly insignificant
# whitespace, so a large source normalises to a small result.
GENERATED_LINE_BYTES = 16 * 1024


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


def blocks_of(source):
    """Every block of a body source (BytesSource, GeneratedJsonl), in order."""
    return source.iter_blocks(0, source.length, IO_BLOCK_BYTES)


class SiteEntry(object):
    """What the source site answers at one path."""

    def __init__(self, status=200, source=None, content_type=None, etag=None, last_modified=None,
                 location=None, headers=(), chunk_bytes=None):
        self.status = status
        self.chunk_bytes = chunk_bytes  # sent chunked, in pieces of at most this size (no Content-Length)
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


class SourceSite(Fake):
    """The source site. Options (also plane keywords) describe what
    ``source_path`` answers: source (bytes or a body source such as
    GeneratedJsonl; default a small CSV), source_path (default /data.csv),
    source_content_type (default text/csv, or application/x-ndjson for a
    GeneratedJsonl), source_etag, source_last_modified, source_headers.

    secret_values() and describe_secret(value) come from the plane: each
    request is searched for the secrets known when it arrives.
    Faults: ``add_fault(fault, source_match(path=None, **fields))`` for GETs
    (of one path); every request the site receives without a match.
    Observing: requests(), started(path), bytes_sent(n, path).
    """

    # The keywords a plane passes through to this fake.
    OPTIONS = ("source", "source_path", "source_content_type", "source_etag", "source_last_modified",
               "source_headers", "source_chunk_bytes")

    def __init__(self, seed=0, secret_values=None, describe_secret=None, cert_chain=None, source=DEFAULT_SOURCE,
                 source_path=SOURCE_PATH, source_content_type=None, source_etag=None, source_last_modified=None,
                 source_headers=(), source_chunk_bytes=None):
        Fake.__init__(self, LoopbackServer("source", tls=True, seed=seed, secret_values=secret_values,
                                           cert_chain=cert_chain))
        self._secret_values = secret_values or (lambda: ())
        self._describe_secret = describe_secret or (lambda secret: "a secret")
        self._lock = threading.RLock()
        self._entries = {}
        self._hops = []              # SourceHop, in arrival order
        self.source_path = source_path
        if source_content_type is None:
            source_content_type = "application/x-ndjson" if isinstance(source, GeneratedJsonl) else "text/csv"
        self.serve(source_path, source, content_type=source_content_type, etag=source_etag,
                   last_modified=source_last_modified, headers=source_headers, chunk_bytes=source_chunk_bytes)
        self.server.route("GET", "/*", self._handle, raw=True)

    @staticmethod
    def source_match(path=None, **fields):
        """The Match of a GET (of path, when given), narrowed by fields."""
        defaults = {"method": "GET"}
        if path is not None:
            defaults["key"] = path
        return Match(**dict(defaults, **fields))

    # ---------------------------------------------------------------- arrange
    def url(self, path="/", host="localhost"):
        """URL of path on the source site, as the node must reach it."""
        return "https://%s:%d%s" % (host, self.port, path)

    def serve(self, path, data=b"", content_type="application/octet-stream", etag=None, last_modified=None,
              status=200, headers=(), chunk_bytes=None):
        """GET path (the request target, query included if any) answers data
        (bytes, or a body source such as GeneratedJsonl), chunked in pieces of
        at most chunk_bytes when given; returns its URL."""
        source = BytesSource(data) if isinstance(data, (bytes, bytearray)) else data
        with self._lock:
            self._entries[path] = SiteEntry(status, source, content_type, etag, last_modified, None, headers,
                                            chunk_bytes)
        return self.url(path)

    def redirect(self, path, location, status=302, headers=()):
        """GET path answers status with Location: location (as given: relative or absolute)."""
        with self._lock:
            self._entries[path] = SiteEntry(status, BytesSource(b""), None, None, None, location, headers)
        return self.url(path)

    def generated_jsonl(self, size_bytes, path="/data.jsonl", line_bytes=GENERATED_LINE_BYTES,
                        content_type="application/x-ndjson"):
        """Serve a streamed GeneratedJsonl of size_bytes at path; returns its URL."""
        return self.serve(path, GeneratedJsonl(size_bytes, line_bytes), content_type=content_type)

    # ---------------------------------------------------------------- handler
    def _handle(self, ctx):
        req = ctx.request
        read_body(ctx)
        sock = ctx.conn.sock
        try:
            tls_version = sock.version()
        except (AttributeError, OSError, ValueError):
            tls_version = None
        try:
            address = sock.getsockname()[0]
        except OSError:
            address = None
        seen = req.target + "\n" + "\n".join("%s: %s" % pair for pair in req.headers)
        hits = []
        for secret in sorted(self._secret_values(), key=len, reverse=True):
            if secret in seen and not any(secret in hit for hit in hits):
                hits.append(secret)
        leaked = [self._describe_secret(secret) for secret in hits]
        with self._lock:
            entry = self._entries.get(req.target) or self._entries.get(req.raw_path)
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
        ctx.respond(entry.status, entry.response_headers(), source=entry.source, chunk_bytes=entry.chunk_bytes)

    # ---------------------------------------------------------------- observe
    def requests(self):
        """Every request the site received (SourceHop), in order."""
        with self._lock:
            return list(self._hops)

    def started(self, path=None):
        """Predicate for plane.stop_when: a request (for path) has arrived."""
        return lambda: any(path is None or ex.path == path for ex in self.transcript)

    def bytes_sent(self, n, path=None):
        """Predicate for plane.stop_when: the site has sent at least n body bytes of one answer."""
        return lambda: any(ex.resp_bytes >= n and (path is None or ex.path == path) for ex in self.transcript)

    def transport_evidence(self, url):
        """(evidence document, exact) rebuilt from what the site served, the
        first hop being a request for url.

        Hop i's URL is url, then each Location resolved against the previous
        hop's URL (CRAWLER-FETCH-5); status, Content-Type, ETag, Last-Modified
        and Location are the values the site sent; content_length the
        Content-Length the server wrote (None when chunked); peer_address the local address the
        node had connected to; tls_version the version the server negotiated.
        exact is False when a fault changed an answer, a hop had no entry, or
        the requested paths do not follow the URL chain: then only shapes can
        be compared.
        """
        hops = self.requests()
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
                content_length=None if no_body or (entry is not None and entry.chunk_bytes) else length,
                etag=hop.first_header("etag"), last_modified=hop.first_header("last-modified"),
                peer_address=hop.address, tls_version=hop.tls_version))
            if location is not None:
                url = urllib.parse.urljoin(url, location)
        final = hops[-1].entry if hops else None
        sha, size = self._source_digest(final.source) if final is not None else (None, None)
        return docs.make_evidence(out, sha, size), exact

    @staticmethod
    def _source_digest(source):
        if isinstance(source, GeneratedJsonl):
            return source.sha256(), source.length
        h = hashlib.sha256()
        for block in blocks_of(source):
            h.update(block)
        return h.hexdigest(), source.length

    def invariants(self):
        """No secret in any source request (CRAWLER-SECRET-2)."""
        return [Violation("CRAWLER-SECRET-2: secrets stay where they belong", "no secret in a source request",
                          "%s in the request for %s" % (", ".join(hop.leaked), hop.exchange.path))
                for hop in self.requests() if hop.leaked]


class Tripwire(Fake):
    """Answers 418 to anything; any connection to it is a violation."""

    def __init__(self, seed=0, secret_values=None):
        Fake.__init__(self, LoopbackServer("tripwire", tls=True, seed=seed, secret_values=secret_values))
        self.server.route("*", "/*", lambda req: Reply(418, b"tripwire\n", content_type="text/plain"))

    def url(self, path="/", scheme="https", host="127.0.0.1"):
        """A URL on the tripwire (plain http reaches it too: the connection counts)."""
        return "%s://%s:%d%s" % (scheme, host, self.port, path)

    def invariants(self):
        conns = self.connections
        if not conns:
            return []
        return [Violation("no connection to the tripwire",
                          "the tripwire (a redirect, proxy or SSRF target) never receives a connection",
                          "%d connection(s) to the tripwire" % len(conns),
                          "follow no redirect outside the policy and ignore proxy variables "
                          "(CRAWLER-CONFIG-8, CRAWLER-FETCH-2, CRAWLER-IDENTITY-3, CRAWLER-BOOT-2)")]
