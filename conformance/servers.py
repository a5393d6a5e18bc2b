"""Threaded loopback HTTP/1.1 and HTTPS servers for the harness's fakes.

Every fake (the object store, each contract's control plane) is a
LoopbackServer with routes. Its base, Listener, is what it shares with the
proxy (conformance/proxy.py): the listening socket, the accept thread, one
thread per connection, the fault rules, the events with wait_for, close().
The server adds what all HTTP fakes need:

* one thread per connection, HTTP/1.1 keep-alive and ``Connection: close``,
  a small hand-written parser so faults can act at exact byte positions;
  an idle connection is closed after ``idle_close_s`` (as real servers do),
  every connection after its first answer with ``close_after_each``; each
  ConnectionRecord says how many requests it carried and whether its TLS
  handshake resumed a session (``handshakes()`` counts them);
* bodies streamed in both directions in IO_BLOCK_BYTES blocks, never held
  whole (simple routes read small bodies up to MAX_SIMPLE_BODY_BYTES);
* the fault vocabulary of ``conformance.faults``, applied per exchange;
* a transcript (one Exchange per request, secrets masked) and an event
  stream with ``wait_for``; the most requests ever in flight at once;
* ``close()`` that ends every thread promptly, including connections held
  open by a hang or stall: a read already blocked is not interrupted by
  close(), shutdown() is, so close() shuts down every live socket.

    srv = LoopbackServer("plane")
    srv.route("GET", "/v1/status", lambda req: json_reply({"ok": True}))
    srv.serve_json("/manifest.json", {"schema_version": 1})
    ... srv.origin ...
    srv.close()

Only 127.0.0.1 is ever bound, always on port 0. HTTPS uses the test CA in
``conformance/ca/`` (CA_FILE); a client trusts it with SSL_CERT_FILE=CA_FILE.
"""

import collections
import email.utils
import fcntl
import fnmatch
import hashlib
import http
import itertools
import json
import os
import re
import selectors
import socket
import ssl
import struct
import termios
import threading
import time
import traceback
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from conformance import faults as _faults
from conformance.timeouts import Deadline

__all__ = [
    "LoopbackServer", "Request", "Reply", "Exchange", "Event", "ConnectionRecord",
    "ExchangeContext", "BytesSource", "FileSource", "json_reply", "bytes_reply",
    "s3_error_xml", "mask_text", "CA_FILE", "SERVER_CERT_FILE", "SERVER_KEY_FILE",
    "MASK", "IO_BLOCK_BYTES", "UNTRUSTED_CERT_CHAIN", "OTHER_CA_FILE", "MISNAMED_CERT_CHAIN",
]

CA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ca")
CA_FILE = os.path.join(CA_DIR, "ca.pem")
SERVER_CERT_FILE = os.path.join(CA_DIR, "server.pem")
SERVER_KEY_FILE = os.path.join(CA_DIR, "server.key")
# A self-signed certificate for the same loopback names, trusted by nobody.
UNTRUSTED_CERT_CHAIN = (os.path.join(CA_DIR, "untrusted.pem"), os.path.join(CA_DIR, "untrusted.key"))
# A certificate whose chain verifies once OTHER_CA_FILE is trusted, but which
# names only misnamed.invalid: never the host a client asked for.
OTHER_CA_FILE = os.path.join(CA_DIR, "other-ca.pem")
MISNAMED_CERT_CHAIN = (os.path.join(CA_DIR, "misnamed.pem"), os.path.join(CA_DIR, "misnamed.key"))

# Size of every body read and write. Large blocks keep the fakes' own CPU per
# GiB small next to the node's (the store must not dominate a benchmark).
IO_BLOCK_BYTES = 1 << 20
# A "body-progress" event is emitted each time this many more body bytes
# have moved in either direction (and at every fault position).
PROGRESS_EVERY_BYTES = 1 << 20
# A request line plus headers longer than this is answered 431.
MAX_HEAD_BYTES = 64 * 1024
# Simple (non-raw) routes read the request body into memory up to this size;
# a larger body is answered 413. Control-plane documents are far smaller.
MAX_SIMPLE_BODY_BYTES = 8 << 20
# How long close() waits, in total, for connection threads to end after
# their sockets were shut down. A thread still alive after it is a harness
# bug and close() raises, naming the thread.
CLOSE_JOIN_TIMEOUT_S = 5.0
# After answering early (411, a request-phase status fault) the server keeps
# reading the unread request body so the client sees the answer, not a RST.
# The drain ends at the body's end, at client EOF, or after this much silence.
LINGER_SILENCE_S = 2.0

# Before a RST, the server waits (up to this long) for the bytes it already
# wrote to leave its send queue, so "reset after N bytes" delivers exactly N
# bytes even to a slow reader; a peer that reads nothing gets the RST anyway.
RESET_FLUSH_TIMEOUT_S = 2.0
# Polling interval of that wait (the kernel offers no event for it).
RESET_FLUSH_POLL_S = 0.002
# A clean close first discards what the peer already sent (unread bytes at
# close() would make the kernel send RST instead of FIN), up to this many reads.
GRACEFUL_DRAIN_READS = 64
# A kept-alive connection with no request for this long is closed by the
# server, as real ones do (nginx's keepalive_timeout is 75 s; shorter here so
# a worker's runs meet it). None keeps idle connections for ever.
IDLE_CLOSE_S = 20.0
# After an idle close the server has sent its FIN but keeps reading this long: bytes that still
# arrive are a request the client sent on a connection it could have seen was closed
# (ConnectionRecord.sent_after_close). Longer than the checks' poll intervals.
IDLE_CLOSE_LINGER_S = 2.0
# An encrypted TLS 1.3 alert record (2 bytes, the inner type, an AEAD tag of 16) is 19 bytes; a
# request never fits in so few.
MAX_TLS_ALERT_RECORD_BYTES = 32

MASK = "\u2026masked\u2026"
_SECRET_HEADER_WORDS = ("authorization", "cookie", "token", "secret", "signature",
                        "credential", "password", "api-key", "apikey", "x-amz-security")
_URL_QUERY = re.compile(r"(?i)\b((?:https?|s3)://[^\s?'\"<>]*)\?[^\s'\"<>]*")
_TOKEN_CHARS = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")


def socket_buffer_allowance():
    """Bytes a server may still have pushed into the kernel after its peer
    stopped reading: the largest receive buffer the kernel grows a socket to
    plus the largest send buffer (net.ipv4.tcp_rmem and tcp_wmem maxima; 64 MiB
    when they cannot be read). A check that judges a node by how much a fake
    *sent* must allow this much, or it fails whenever the buffers grow."""
    total = 0
    for name in ("tcp_rmem", "tcp_wmem"):
        try:
            with open("/proc/sys/net/ipv4/" + name) as handle:
                total += int(handle.read().split()[2])
        except (OSError, ValueError, IndexError):
            return 64 << 20
    return total


def mask_text(text, secret_values=()):
    """Replace every known secret and every URL query in text with MASK."""
    for secret in secret_values:
        if secret and secret in text:
            text = text.replace(secret, MASK)
    return _URL_QUERY.sub(lambda m: m.group(1) + "?" + MASK, text)


def reason_phrase(code):
    try:
        return http.HTTPStatus(code).phrase
    except ValueError:
        return "Unknown"


def http_date(t=None):
    return email.utils.formatdate(t, usegmt=True)


def _xml_escape(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# Default messages of the S3 error codes the fakes use (texts as S3 sends them).
S3_MESSAGES = {
    "AccessDenied": "Access Denied",
    "AuthorizationQueryParametersError": "Query-string authentication version 4 requires the "
    "X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, "
    "and X-Amz-Expires parameters.",
    "EntityTooLarge": "Your proposed upload exceeds the maximum allowed size",
    "EntityTooSmall": "Your proposed upload is smaller than the minimum allowed size",
    "ExpiredToken": "The provided token has expired.",
    "InternalError": "We encountered an internal error. Please try again.",
    "InvalidAccessKeyId": "The AWS Access Key Id you provided does not exist in our records.",
    "InvalidArgument": "Invalid Argument",
    "InvalidToken": "The provided token is malformed or otherwise invalid.",
    "MalformedPOSTRequest": "The body of your POST request is not well-formed multipart/form-data.",
    "MaxPostPreDataLengthExceeded": "Your POST request fields preceding the upload file were too large.",
    "MethodNotAllowed": "The specified method is not allowed against this resource.",
    "MissingContentLength": "You must provide the Content-Length HTTP header.",
    "NoSuchKey": "The specified key does not exist.",
    "NotImplemented": "A header you provided implies functionality that is not implemented.",
    "PreconditionFailed": "At least one of the pre-conditions you specified did not hold",
    "RequestTimeout": "Your socket connection to the server was not read from or written to "
    "within the timeout period. Idle connections will be closed.",
    "ServiceUnavailable": "Service is unable to handle request.",
    "SignatureDoesNotMatch": "The request signature we calculated does not match the signature "
    "you provided. Check your key and signing method.",
    "SlowDown": "Please reduce your request rate.",
}


def s3_error_xml(code, message=None, request_id="0000000000000000", host_id="", extra=()):
    """S3's error document: Code, Message, any extra elements, RequestId, HostId."""
    if message is None:
        message = S3_MESSAGES.get(code, code)
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>', _xml_escape(code),
             "</Code><Message>", _xml_escape(message), "</Message>"]
    for name, value in extra:
        parts.append("<%s>%s</%s>" % (name, _xml_escape(value), name))
    parts += ["<RequestId>", _xml_escape(request_id), "</RequestId><HostId>",
              _xml_escape(host_id), "</HostId></Error>"]
    return "".join(parts).encode("utf-8")


# ---------------------------------------------------------------- records

Event = collections.namedtuple("Event", "t kind seq key method bytes conn_id detail")
Event.__doc__ = """One thing that happened on a server, in order.

kinds: connect, tls-done, request (headers read), key (an upload's key read),
body-progress (detail "in" or "out"; bytes = running total), body-done,
fault (a fault acted; detail = its description), commit (store),
response-headers, done (exchange ended; detail = outcome), closed (connection).
t is time.monotonic().
"""


@dataclass
class Exchange:
    """One request and what became of it. Times are time.monotonic().

    outcome: "ok" (answer fully sent), "reset" (server sent RST), "truncated",
    "stalled"/"held" (a fault held it until release or close), "client-gone"
    (peer closed or reset first), "closed" (server close() ended it),
    "bad-request", "server-error" (a harness bug; see LoopbackServer.errors).
    """
    seq: int
    conn_id: int
    method: str
    path: str
    key: Optional[str]
    headers: List[Tuple[str, str]]
    t_start: float
    t_body_done: Optional[float] = None
    t_headers_sent: Optional[float] = None
    t_answer: Optional[float] = None        # just before the first byte of the answer (or a reset) was sent
    t_end: Optional[float] = None
    status: Optional[int] = None
    req_bytes: int = 0
    resp_bytes: int = 0
    fault: Optional[str] = None
    outcome: Optional[str] = None
    error_code: Optional[str] = None
    query_names: List[str] = field(default_factory=list)
    notes: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ConnectionRecord:
    conn_id: int
    t_accept: float
    tls: bool
    t_tls_done: Optional[float] = None
    t_closed: Optional[float] = None
    requests: int = 0
    fault: Optional[str] = None
    outcome: Optional[str] = None
    tls_resumed: Optional[bool] = None  # the handshake resumed a session (None: no TLS, or none finished)
    sent_after_close: bool = False  # the client sent bytes after the server's idle close (its FIN)


class Headers(object):
    """Request headers in arrival order, looked up case-insensitively."""

    def __init__(self, pairs):
        self.pairs = pairs

    def get(self, name, default=None):
        name = name.lower()
        for k, v in self.pairs:
            if k.lower() == name:
                return v
        return default

    def get_all(self, name):
        name = name.lower()
        return [v for k, v in self.pairs if k.lower() == name]

    def __contains__(self, name):
        return self.get(name) is not None

    def __iter__(self):
        return iter(self.pairs)


class Request(object):
    """A parsed request head. ``body`` is filled only for simple routes."""

    def __init__(self, method, target, version, headers):
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        raw_path, _, raw_query = target.partition("?")
        self.raw_path = raw_path
        self.path = urllib.parse.unquote(raw_path)
        self.raw_query = raw_query
        self.has_query = "?" in target
        self.query_list = urllib.parse.parse_qsl(raw_query, keep_blank_values=True)
        self.query = dict(self.query_list)
        self.content_length = None
        self.chunked = False
        self.body = None
        conn_tokens = [t.strip().lower() for v in headers.get_all("connection") for t in v.split(",")]
        if version == "HTTP/1.0":
            self.keep_alive = "keep-alive" in conn_tokens
        else:
            self.keep_alive = "close" not in conn_tokens
        self.expect_continue = (headers.get("expect", "") or "").lower() == "100-continue"

    @property
    def has_body(self):
        return self.chunked or bool(self.content_length)


class Reply(object):
    """What a simple route returns: status, headers, and a small body."""

    def __init__(self, status=200, body=b"", headers=(), content_type="application/octet-stream"):
        self.status = status
        self.body = bytes(body)
        self.headers = list(headers)
        if content_type and not any(k.lower() == "content-type" for k, _ in self.headers):
            self.headers.append(("Content-Type", content_type))


def json_reply(obj, status=200, headers=()):
    return Reply(status, json.dumps(obj).encode("utf-8"), headers, "application/json")


def bytes_reply(data, status=200, content_type="application/octet-stream", headers=()):
    return Reply(status, data, headers, content_type)


# ---------------------------------------------------------------- body sources

class BytesSource(object):
    """A response body already in memory (small documents, error XML)."""

    def __init__(self, data):
        self.data = bytes(data)
        self.length = len(self.data)

    def iter_blocks(self, start, end, max_block):
        mv = memoryview(self.data)
        while start < end:
            n = min(max_block, end - start)
            yield mv[start:start + n]
            start += n

    def send_range(self, conn, start, end, progress):
        for block in self.iter_blocks(start, end, IO_BLOCK_BYTES):
            conn.send(block)
            progress(len(block))


class FileSource(object):
    """A response body streamed from a file; os.sendfile on plain sockets."""

    def __init__(self, path, length):
        self.path = path
        self.length = length

    def iter_blocks(self, start, end, max_block):
        buf = bytearray(min(IO_BLOCK_BYTES, max(1, max_block)))
        mv = memoryview(buf)
        with open(self.path, "rb", buffering=0) as f:
            f.seek(start)
            while start < end:
                n = f.readinto(mv[:min(len(buf), end - start)])
                if not n:
                    raise IOError("%s shrank while being served" % self.path)
                for i in range(0, n, max_block):
                    yield mv[i:min(n, i + max_block)]
                start += n

    def send_range(self, conn, start, end, progress):
        with open(self.path, "rb", buffering=0) as f:
            if conn.can_sendfile:
                while start < end:
                    n = conn.sendfile(f.fileno(), start, min(IO_BLOCK_BYTES, end - start))
                    if n == 0:
                        raise IOError("%s shrank while being served" % self.path)
                    start += n
                    progress(n)
                return
        for block in self.iter_blocks(start, end, IO_BLOCK_BYTES):
            conn.send(block)
            progress(len(block))


class ChunkedSource(object):
    """A body sent with `Transfer-Encoding: chunked`: `inner`'s bytes in chunks of at most
    chunk_bytes, each framed as HTTP/1.1 frames it (size in hex, CRLF, data, CRLF), then the
    last chunk. `length` is the framed size, what goes on the wire after the head."""

    LAST_CHUNK = b"0\r\n\r\n"

    def __init__(self, inner, chunk_bytes):
        self.inner, self.chunk_bytes = inner, max(1, int(chunk_bytes))
        full, rest = divmod(inner.length, self.chunk_bytes)
        self.length = full * self._framed(self.chunk_bytes) + (self._framed(rest) if rest else 0) + len(
            self.LAST_CHUNK)

    @staticmethod
    def _framed(size):
        return len(b"%x\r\n" % size) + size + 2

    def _pieces(self):
        position = 0
        while position < self.inner.length:
            size = min(self.chunk_bytes, self.inner.length - position)
            yield b"%x\r\n" % size
            for block in self.inner.iter_blocks(position, position + size, IO_BLOCK_BYTES):
                yield block
            yield b"\r\n"
            position += size
        yield self.LAST_CHUNK

    def iter_blocks(self, start, end, max_block):
        offset = 0
        for piece in self._pieces():
            view, size = memoryview(piece), len(piece)
            low, high = max(start, offset) - offset, min(end, offset + size) - offset
            for index in range(low, high, max_block):
                yield view[index:min(high, index + max_block)]
            offset += size
            if offset >= end:
                return

    def send_range(self, conn, start, end, progress):
        for block in self.iter_blocks(start, end, IO_BLOCK_BYTES):
            conn.send(block)
            progress(len(block))


# What an endless status answer's Content-Length promises beyond its body:
# far more than a bounded reader takes, and small enough that a reader which
# allocates what it is promised (http.client's read() does) can, and then
# waits instead of failing at once with a MemoryError.
ENDLESS_PROMISE_BYTES = 64 << 20


class _PromisedSource(object):
    """A small body whose declared length runs on far past it: the body, then
    oversize filler (sent only if a check releases the stall)."""

    def __init__(self, body_source):
        self.body = body_source
        self.length = body_source.length + ENDLESS_PROMISE_BYTES

    def iter_blocks(self, start, end, max_block):
        if start < self.body.length:
            for block in self.body.iter_blocks(start, min(end, self.body.length), max_block):
                yield block
        for block in _filler_blocks(end - max(start, self.body.length)):
            yield block

    def send_range(self, conn, start, end, progress):
        for block in self.iter_blocks(start, end, IO_BLOCK_BYTES):
            conn.send(block)
            progress(len(block))


def _endless(fault, source):
    """(source, writer fault) of a fault's answer: an endless status answer is
    its body, then a stall on an open connection under a Content-Length that
    promises more (faults.status(..., endless=True))."""
    if fault.kind != "status" or not fault.endless:
        return source, None
    return _PromisedSource(source), _faults.stall(source.length)


def _filler_blocks(length):
    """`length` bytes of the oversize filler pattern, in blocks."""
    pattern = (b"OVERSIZE" * (IO_BLOCK_BYTES // 8))
    mv = memoryview(pattern)
    while length > 0:
        n = min(length, len(pattern))
        yield mv[:n]
        length -= n


# ---------------------------------------------------------------- errors

class ExchangeEnded(Exception):
    """Unwinds a handler when a fault (or close) ended the exchange."""

    def __init__(self, outcome, keep_alive=False):
        Exception.__init__(self, outcome)
        self.outcome = outcome
        self.keep_alive = keep_alive


class ClientGone(Exception):
    """The peer closed or reset the connection before the exchange ended."""


class BadRequest(Exception):
    def __init__(self, status, message):
        Exception.__init__(self, message)
        self.status = status


# ---------------------------------------------------------------- connection

def _holds_request_record(data):
    """True when these raw TLS bytes hold an application-data record longer than any alert."""
    at = 0
    while at + 5 <= len(data):  # TLS records: type, version, length, then the length's bytes
        kind, length = data[at], int.from_bytes(data[at + 3:at + 5], "big")
        if kind == 0x17 and length > MAX_TLS_ALERT_RECORD_BYTES:
            return True
        at += 5 + length
    return False


class _Conn(object):
    """One accepted socket: a read buffer for the head, then raw body I/O."""

    def __init__(self, sock, conn_id, record):
        self.sock = sock
        self.conn_id = conn_id
        self.record = record
        self.fd = sock.fileno()
        self.lock = threading.Lock()
        self.pending = bytearray()
        self.pos = 0
        self.aborted = False
        self.closed = False
        self.tls = False
        self.scratch = None
        self.answer_left = 0
        self.before_last_send = None

    def expect_answer(self, nbytes, before_last_send):
        """The next `nbytes` sent make up one whole answer. `before_last_send`
        is called just before the send that completes them: by then no client
        can have read the whole answer, so a serial client's next request
        always arrives after it."""
        self.answer_left = nbytes
        self.before_last_send = before_last_send

    def _sending(self, nbytes):
        if self.before_last_send is not None and nbytes >= self.answer_left:
            hook, self.before_last_send = self.before_last_send, None
            hook()

    def scratch_buffer(self):
        """One IO_BLOCK_BYTES buffer per connection, reused by every request."""
        if self.scratch is None:
            self.scratch = bytearray(IO_BLOCK_BYTES)
        return self.scratch

    @property
    def can_sendfile(self):
        return not self.tls and hasattr(os, "sendfile")

    def recv_into(self, mv):
        avail = len(self.pending) - self.pos
        if avail > 0:
            n = min(avail, len(mv))
            mv[:n] = self.pending[self.pos:self.pos + n]
            self.pos += n
            if self.pos == len(self.pending):
                self.pending = bytearray()
                self.pos = 0
            return n
        try:
            return self.sock.recv_into(mv)
        except ssl.SSLEOFError:
            return 0

    def idle_wait(self, seconds):
        """Wait up to `seconds` for the next request's first byte; False when none came."""
        if len(self.pending) > self.pos or (self.tls and self.sock.pending()):
            return True
        with selectors.DefaultSelector() as sel:  # not select(): a descriptor may be above FD_SETSIZE
            sel.register(self.sock, selectors.EVENT_READ)
            return bool(sel.select(seconds))

    def sent_after_fin(self, seconds):
        """Send FIN (the TLS layer dropped: no close_notify) and read until the client closes its end,
        for up to `seconds`; the record's sent_after_close is set the moment a request arrives. Over
        TLS, a record too short to hold a request (the client's encrypted close_notify) is not one."""
        received = bytearray()
        try:
            self.sock.shutdown(socket.SHUT_WR)  # an SSLSocket drops its TLS layer here: raw bytes from now
            deadline = time.monotonic() + seconds
            with selectors.DefaultSelector() as sel:
                sel.register(self.sock, selectors.EVENT_READ)
                while sel.select(max(0.0, deadline - time.monotonic())):
                    chunk = self.sock.recv(65536)
                    if not chunk:
                        return
                    received += chunk
                    if not self.tls or _holds_request_record(received):
                        self.record.sent_after_close = True
                        return
        except (OSError, ValueError):
            pass

    def read_head(self):
        """Bytes up to the blank line, or None on EOF before any byte."""
        start = self.pos
        while True:
            # A client may send CRLFs between requests; RFC 9112 says ignore them.
            while self.pending[start:start + 2] == b"\r\n":
                start += 2
            self.pos = start
            i = self.pending.find(b"\r\n\r\n", start)
            if i >= 0:
                head = bytes(self.pending[start:i])
                self.pos = i + 4
                if self.pos == len(self.pending):
                    self.pending = bytearray()
                    self.pos = 0
                return head
            if len(self.pending) - start > MAX_HEAD_BYTES:
                raise BadRequest(431, "request head larger than %d bytes" % MAX_HEAD_BYTES)
            try:
                chunk = self.sock.recv(65536)
            except ssl.SSLEOFError:
                chunk = b""
            if not chunk:
                if len(self.pending) - start == 0:
                    return None
                raise ClientGone("peer closed inside a request head")
            if start > 0:
                del self.pending[:start]
                start = 0
                self.pos = 0
            self.pending += chunk

    def readline(self, limit=8192):
        while True:
            i = self.pending.find(b"\n", self.pos)
            if i >= 0:
                line = bytes(self.pending[self.pos:i + 1])
                self.pos = i + 1
                return line
            if len(self.pending) - self.pos > limit:
                raise BadRequest(400, "line too long in chunked body")
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ClientGone("peer closed inside a chunked body")
            del self.pending[:self.pos]
            self.pos = 0
            self.pending += chunk

    def send(self, data):
        self._sending(len(data))
        self.sock.sendall(data)
        self.answer_left -= len(data)

    def sendfile(self, fd, offset, count):
        self._sending(count)
        n = os.sendfile(self.fd, fd, offset, count)
        self.answer_left -= n
        return n

    def abort(self):
        """shutdown(SHUT_RDWR) by file descriptor: wakes any blocked call.

        By fd, because while ssl wraps a socket the original object is
        detached and its own shutdown() fails with EBADF; the fd survives.
        """
        with self.lock:
            self.aborted = True
            if self.closed:
                return
            try:
                s = socket.socket(fileno=self.fd)
            except OSError:
                return
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            finally:
                s.detach()

    def unsent_bytes(self):
        """Bytes still in our send queue (unsent or unacknowledged); 0 if unknown."""
        try:
            out = fcntl.ioctl(self.fd, termios.TIOCOUTQ, b"\0\0\0\0")
        except (OSError, AttributeError):
            return 0
        return struct.unpack("i", out)[0]

    def hard_reset(self, closing=None):
        """Close with SO_LINGER 0, so the kernel sends RST, not FIN.

        A RST discards whatever is still queued for sending, so first wait
        (bounded, and cut short by the server's close) for the queue to drain.
        """
        deadline = time.monotonic() + RESET_FLUSH_TIMEOUT_S
        while not self.closed and self.unsent_bytes() > 0 and time.monotonic() < deadline:
            if closing is not None and closing.wait(RESET_FLUSH_POLL_S):
                break
            if closing is None:
                time.sleep(RESET_FLUSH_POLL_S)
        with self.lock:
            if self.closed:
                return
            try:
                socket.socket.setsockopt(self.sock, socket.SOL_SOCKET, socket.SO_LINGER,
                                         struct.pack("ii", 1, 0))
            except OSError:
                pass
            self._close_locked()

    def graceful_close(self):
        """FIN after our last byte; discard what the peer already sent."""
        with self.lock:
            if self.closed:
                return
            try:
                socket.socket.shutdown(self.sock, socket.SHUT_WR)
                self.sock.setblocking(False)
                for _ in range(GRACEFUL_DRAIN_READS):
                    if not socket.socket.recv(self.sock, 65536):
                        break
            except (OSError, ValueError):
                pass
            self._close_locked()

    def _close_locked(self):
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass


# ---------------------------------------------------------------- body reader

class BodyReader(object):
    """Reads a request body (Content-Length or chunked), counting bytes.

    ``consumed`` counts the bytes handed to the handler. A request-side fault
    is armed at a byte position: when ``consumed`` reaches it, ``on_limit``
    runs (it resets, or holds, and normally raises ExchangeEnded).
    """

    def __init__(self, ctx, conn, request):
        self.ctx = ctx
        self.conn = conn
        self.chunked = request.chunked
        self.remaining = None if request.chunked else (request.content_length or 0)
        self.chunk_left = 0
        self.finished = (not request.chunked) and self.remaining == 0
        self.consumed = 0
        self.limit = None
        self.on_limit = None
        self.expect_continue = request.expect_continue and not self.finished
        self._next_progress = PROGRESS_EVERY_BYTES

    def arm(self, position, on_limit):
        self.limit = position
        self.on_limit = on_limit
        if self.consumed >= position:
            self._fire()

    def disarm(self):
        self.limit = None
        self.on_limit = None

    def _fire(self):
        on_limit = self.on_limit
        self.disarm()
        on_limit()

    def readinto(self, mv):
        """Up to len(mv) body bytes; 0 at the end of the body."""
        if self.finished or len(mv) == 0:
            return 0
        if self.expect_continue:
            self.expect_continue = False
            self.conn.send(b"HTTP/1.1 100 Continue\r\n\r\n")
        want = len(mv)
        if self.limit is not None:
            want = min(want, self.limit - self.consumed)
        if self.chunked:
            if self.chunk_left == 0:
                self._next_chunk()
                if self.finished:
                    return 0
            want = min(want, self.chunk_left)
        else:
            want = min(want, self.remaining)
        n = self.conn.recv_into(mv[:want])
        if n == 0:
            raise ClientGone("peer closed with request body outstanding")
        self.consumed += n
        if self.chunked:
            self.chunk_left -= n
            if self.chunk_left == 0:
                if self.conn.readline() not in (b"\r\n", b"\n"):
                    raise BadRequest(400, "chunk not followed by CRLF")
        else:
            self.remaining -= n
            if self.remaining == 0:
                self.finished = True
        if self.finished:
            self.ctx._mark_body_done()
        if self.consumed >= self._next_progress:
            self._next_progress = (self.consumed // PROGRESS_EVERY_BYTES + 1) * PROGRESS_EVERY_BYTES
            self.ctx.event("body-progress", self.consumed, "in")
        if self.limit is not None and self.consumed >= self.limit:
            self._fire()
        return n

    def _next_chunk(self):
        line = self.conn.readline().split(b";", 1)[0].strip()
        try:
            size = int(line, 16)
        except ValueError:
            raise BadRequest(400, "bad chunk size line")
        if size == 0:
            while self.conn.readline() not in (b"\r\n", b"\n"):
                pass
            self.finished = True
            self.ctx._mark_body_done()
        self.chunk_left = size

    def readinto_full(self, mv):
        """Fill mv completely unless the body ends first; returns the count."""
        total = 0
        size = len(mv)
        while total < size:
            n = self.readinto(mv[total:])
            if n == 0:
                break
            total += n
        return total

    def drain(self):
        """Read and discard the rest of the body."""
        if self.finished:
            return
        buf = self.conn.scratch_buffer()
        mv = memoryview(buf)
        while self.readinto(mv):
            pass


# ---------------------------------------------------------------- exchange

class ExchangeContext(object):
    """One request being served: its request, body, fault and transcript.

    Raw route handlers receive this; simple routes never see it. A handler
    reads the body with ``ctx.body`` (a BodyReader), says the body is done
    with ``body_finished()``, checks ``refused`` (a fault will answer instead,
    so do not commit), and answers with ``respond()``.
    """

    def __init__(self, server, conn, request, exchange):
        self.server = server
        self.conn = conn
        self.request = request
        self.exchange = exchange
        self.body = BodyReader(self, conn, request)
        self.rule = None
        self.phase = None
        self.responded = False
        self.in_flight = True  # counted in the server's in_flight until the answer is out
        self.keep_alive = request.keep_alive and not server.close_after_each

    # -- records
    @property
    def key(self):
        return self.exchange.key

    def event(self, kind, nbytes=None, detail=None):
        ex = self.exchange
        self.server._event(kind, ex.seq, ex.conn_id, ex.method, ex.key, nbytes, detail)

    def note(self, **notes):
        self.exchange.notes.update(notes)

    # -- fault selection
    def select_fault(self, which):
        if self.rule is not None:
            return
        srv = self.server
        with srv._lock:
            rule = _faults.select_rule(srv._rules, self.request.method, self.exchange.key, which)
        if rule is None:
            return
        self.rule = rule
        self.phase = rule.phase_for(self.request.method)
        self.exchange.fault = rule.fault.describe(self.phase)
        self.act_request_phase()

    def set_key(self, key):
        """For routes whose key is in the body: match key-glob faults now."""
        self.exchange.key = key
        self.event("key")
        self.select_fault("keyed")

    @property
    def refused(self):
        """True when a response-phase fault answers instead of the handler."""
        return self.rule is not None and self.phase == "response" and self.rule.fault.refuses

    def _hold(self, outcome):
        """Hold the exchange until the rule is released or the server closes."""
        self.event("fault", self.body.consumed, self.exchange.fault)
        if self.rule.hold():
            return
        self.exchange.notes["held_until"] = "close" if self.server.closing else "release"
        raise ExchangeEnded(outcome)

    def _sleep(self, seconds):
        if self.server._closing.wait(seconds):
            raise ExchangeEnded("closed")

    def act_request_phase(self):
        rule = self.rule
        if rule is None or self.phase != "request":
            return
        kind = rule.fault.kind
        if kind == "hang":
            self._hold("held")
            self.rule = None
        elif kind == "delay":
            self.event("fault", self.body.consumed, self.exchange.fault)
            self._sleep(rule.fault.seconds)
            self.rule = None
        elif kind in ("status", "redirect", "garbage"):
            self.event("fault", self.body.consumed, self.exchange.fault)
            status, headers, source = self._fault_answer(rule.fault)
            source, writer_fault = _endless(rule.fault, source)
            self.body.expect_continue = False
            self.keep_alive = False
            self._write_response(status, headers, source, head_only=self._head_only(), writer_fault=writer_fault)
            self.linger()
            raise ExchangeEnded("ok")
        elif kind in ("reset", "stall"):
            self.body.arm(rule.fault.after_bytes, self._fire_request_fault)

    def _fire_request_fault(self):
        kind = self.rule.fault.kind
        if kind == "reset":
            self.event("fault", self.body.consumed, self.exchange.fault)
            self._reset()
        self._hold("stalled")
        self.rule = None

    def _mark_body_done(self):
        if self.exchange.t_body_done is None:
            self.exchange.t_body_done = time.monotonic()
            self.exchange.req_bytes = self.body.consumed
            self.event("body-done", self.body.consumed)

    def body_finished(self):
        """The handler is done with the body: fire a request-side fault whose
        position lies beyond the body's end (it acts here, before any commit)."""
        if self.body.limit is not None:
            self.body._fire()

    def linger(self):
        """Drain the unread body after an early answer, bounded by silence."""
        if self.body.finished:
            return
        try:
            self.conn.sock.settimeout(LINGER_SILENCE_S)
            self.body.drain()
        except (OSError, ClientGone, BadRequest):
            pass

    # -- answering
    def _head_only(self):
        return self.request.method == "HEAD"

    def _fault_answer(self, fault):
        srv = self.server
        if fault.kind == "status":
            headers = []
            if fault.retry_after_s is not None:
                headers.append(("Retry-After", "%d" % int(round(fault.retry_after_s))))
            if fault.body is not None:
                body = fault.body
                headers.append(("Content-Type", "application/octet-stream"))
            elif fault.s3_code:
                body = srv.error_body(fault.s3_code, fault.message, self.exchange.seq)
                headers.append(("Content-Type", "application/xml"))
                self.exchange.error_code = fault.s3_code
            else:
                body = b""
            return (fault.code, fault.reason), headers, BytesSource(body)
        if fault.kind == "redirect":
            return fault.code, [("Location", fault.location)], BytesSource(b"")
        return 200, [("Content-Type", "application/octet-stream")], BytesSource(fault.body)

    def respond(self, status, headers=(), body=None, source=None, close=False, error_code=None, chunk_bytes=None):
        """Send the answer, with the exchange's response-phase fault applied.

        ``status`` is a code or (code, reason). ``source`` streams a large body
        (BytesSource/FileSource or anything with length, iter_blocks and
        send_range); ``body`` is a small bytes body. ``chunk_bytes`` sends the
        body chunked, in chunks of at most that many bytes, with no
        Content-Length (a peer's framing the node must read). Returns once fully
        sent; raises ExchangeEnded when a fault ended the exchange instead.
        """
        if self.responded:
            raise RuntimeError("respond() called twice")
        self.responded = True
        if source is None:
            source = BytesSource(body or b"")
        if chunk_bytes:
            source = ChunkedSource(source, chunk_bytes)
            headers = list(headers) + [("Transfer-Encoding", "chunked")]
        if error_code:
            self.exchange.error_code = error_code
        if close:
            self.keep_alive = False
        if not self.body.finished:
            # Unread request body: the connection cannot be reused.
            self.keep_alive = False
        rule = self.rule if self.phase == "response" else None
        writer_fault = None
        if rule is not None:
            kind = rule.fault.kind
            if kind == "hang":
                self._hold("held")
            elif kind in ("status", "redirect", "garbage"):
                self.event("fault", None, self.exchange.fault)
                status, headers, source = self._fault_answer(rule.fault)
                source, writer_fault = _endless(rule.fault, source)
            elif kind == "delay":
                self.event("fault", None, self.exchange.fault)
                self._sleep(rule.fault.seconds)
            elif kind == "accept_then_hang":
                self._hold("held")
            elif kind == "accept_then_reset":
                self.event("fault", None, self.exchange.fault)
                self._reset()
            else:
                writer_fault = rule.fault
        self._write_response(status, headers, source, self._head_only(), writer_fault)
        self.leave_flight()

    def _reset(self):
        """End the exchange with a RST. Out of flight first, so a retry is not
        counted as a second request in flight; and when no answer began, the
        reset is the answer: t_answer is stamped before the client can see it
        (the exchange's end is stamped later, when this thread gets to it,
        which on a loaded machine may be after the client's next request)."""
        self.leave_flight()
        if self.exchange.t_answer is None:
            self.exchange.t_answer = time.monotonic()
        self.conn.hard_reset(self.server._closing)
        raise ExchangeEnded("reset")

    def leave_flight(self):
        """The exchange stops counting as in flight: the send that completes
        its answer is about to start (see _Conn.expect_answer), or the
        exchange ended. Before that send, not after it: a client that sends
        its next request as soon as it has read this answer must never be
        seen as having two requests in flight, however the server's threads
        are scheduled."""
        with self.server._lock:
            if self.in_flight:
                self.in_flight = False
                self.server.in_flight -= 1

    def _write_response(self, status, headers, source, head_only, writer_fault):
        ex = self.exchange
        srv = self.server
        if isinstance(status, tuple):
            code, reason = status
        else:
            code, reason = status, None
        reason = reason or reason_phrase(code)
        ex.status = code
        length = source.length
        extra = 0
        declare_length = True
        kind = writer_fault.kind if writer_fault is not None else None
        if kind == "oversize":
            extra = writer_fault.extra_bytes
            if writer_fault.content_length == "absent":
                declare_length = False
                self.keep_alive = False
        if kind in ("stall", "reset", "truncate"):
            self.keep_alive = False
        if srv.closing:
            self.keep_alive = False
        lines = ["HTTP/1.1 %d %s" % (code, reason)]
        names = set()
        for k, v in headers:
            lines.append("%s: %s" % (k, v))
            names.add(k.lower())
        if "date" not in names:
            lines.append("Date: " + http_date())
        if "server" not in names and srv.server_header:
            lines.append("Server: " + srv.server_header)
        no_body_status = code in (204, 304) or 100 <= code < 200
        if declare_length and not no_body_status and "transfer-encoding" not in names:  # never both (RFC 9112 6.2)
            lines.append("Content-Length: %d" % (length + extra))
        if not self.keep_alive:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        send_body = not head_only and not no_body_status
        total = (length + extra) if send_body else 0

        # Stamped before sending, so no client can have seen the answer earlier.
        ex.t_answer = time.monotonic()
        self.conn.expect_answer(len(head) + total, self.leave_flight)
        if kind == "dribble":
            self._dribble(head, source, length, extra if send_body else 0, send_body, writer_fault)
        else:
            self.conn.send(head)
            ex.t_headers_sent = time.monotonic()
            self.event("response-headers", None, code)
            if send_body:
                cut = total
                if kind in ("stall", "reset", "truncate"):
                    cut = min(writer_fault.after_bytes, total)
                self._send_body(source, length, cut)
        if kind in ("stall", "reset", "truncate"):
            self.event("fault", ex.resp_bytes, ex.fault)
            if kind == "reset":
                self._reset()
            if kind == "truncate":
                self.leave_flight()
                self.conn.graceful_close()
                raise ExchangeEnded("truncated")
            self._hold("stalled")
            # Released with answer=True: send the rest of the body.
            if send_body and ex.resp_bytes < total:
                self._send_body(source, length, total, start=ex.resp_bytes)
        if not declare_length and send_body:
            self.leave_flight()
            self.conn.graceful_close()
            self.keep_alive = False

    def _progress_out(self, n):
        ex = self.exchange
        before = ex.resp_bytes
        ex.resp_bytes += n
        if ex.resp_bytes // PROGRESS_EVERY_BYTES != before // PROGRESS_EVERY_BYTES:
            self.event("body-progress", ex.resp_bytes, "out")

    def _send_body(self, source, length, end, start=0):
        """Send body bytes [start, end): the object, then oversize filler."""
        if start < min(end, length):
            source.send_range(self.conn, start, min(end, length), self._progress_out)
        if end > length:
            for block in _filler_blocks(end - max(start, length)):
                self.conn.send(block)
                self._progress_out(len(block))

    def _dribble(self, head, source, length, extra, send_body, fault):
        """Send head and body `chunk_bytes` at a time, `interval_s` apart."""
        ex = self.exchange
        chunk = fault.chunk_bytes
        self.event("fault", 0, ex.fault)
        state = {"head_left": len(head), "first": True}

        def send_piece(piece):
            if not state["first"]:
                self._sleep(fault.interval_s)
            state["first"] = False
            self.conn.send(piece)
            from_head = min(state["head_left"], len(piece))
            state["head_left"] -= from_head
            if from_head < len(piece):
                self._progress_out(len(piece) - from_head)
            if state["head_left"] == 0 and ex.t_headers_sent is None:
                ex.t_headers_sent = time.monotonic()
                self.event("response-headers", None, ex.status)

        def blocks():
            yield memoryview(head)
            if send_body:
                for block in source.iter_blocks(0, length, IO_BLOCK_BYTES):
                    yield block
                for block in _filler_blocks(extra):
                    yield block

        pending = bytearray()
        for block in blocks():
            pending += block
            while len(pending) >= chunk:
                piece = bytes(pending[:chunk])
                del pending[:chunk]
                send_piece(piece)
        if pending:
            send_piece(bytes(pending))


# ---------------------------------------------------------------- the server

class _Route(object):
    def __init__(self, method, pattern, handler, raw, key, key_in_body):
        self.method = method.upper()
        self.pattern = pattern
        self.handler = handler
        self.raw = raw
        self.key = key
        self.key_in_body = key_in_body

    def matches(self, method, path):
        if self.method != "*" and self.method != method:
            if not (self.method == "GET" and method == "HEAD"):
                return False
        return fnmatch.fnmatchcase(path, self.pattern)


_server_contexts = {}
_server_contexts_lock = threading.Lock()


def _server_context(cert_chain):
    """One server SSLContext per certificate chain, shared by every server.

    A context is never changed after it is made and wrap_socket() is safe
    from any thread; loading the chain costs milliseconds of CPU, which a
    conformance run with hundreds of planes of four TLS servers each would
    otherwise pay every time.
    """
    with _server_contexts_lock:
        context = _server_contexts.get(cert_chain)
        if context is None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*cert_chain)
            _server_contexts[cert_chain] = context
        return context


class Listener(object):
    """What every loopback fake that accepts connections shares (LoopbackServer,
    the proxy): a listening socket on 127.0.0.1, port 0; an accept thread woken
    for close() by a socket pair; one thread per connection; the fault rules
    (add_fault, clear_faults); an event stream with wait_for and wait_until;
    close() that ends every thread or says which did not end.

    A subclass builds each connection's thread in _connection_thread(sock,
    conn_id) (under the lock; the thread is started by the base) and ends
    live connections in _abort_connections() (close() calls it once the
    accept thread is gone: a read already blocked is not interrupted by
    close(), shutdown() is)."""

    def __init__(self, name, seed=0):
        self.name = name
        self.seed = seed
        self.errors = []
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._closing = threading.Event()
        self._closed = False
        self._rules = []
        self._all_rules = []
        self._events = []
        self._threads = []
        self._seq = itertools.count(1)
        self._conn_ids = itertools.count(1)
        self._rule_index = itertools.count(0)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._listener.bind(("127.0.0.1", 0))
            self._listener.listen(128)
            self._wake_r, self._wake_w = socket.socketpair()
        except BaseException:
            self._listener.close()
            raise
        self.host, self.port = self._listener.getsockname()[:2]

    def _start_accepting(self):
        """Start the accept thread (at the end of a subclass's __init__)."""
        self._accept_thread = threading.Thread(
            target=self._accept_loop, name="%s-accept-%d" % (self.name, self.port), daemon=True)
        self._accept_thread.start()

    # -- faults
    def add_fault(self, fault, match=None):
        """Install a fault; returns its FaultRule (counters, release, remove)."""
        self._admit_fault(fault)
        with self._lock:
            rule = _faults.FaultRule(fault, match, next(self._rule_index), self.seed,
                                     on_remove=self._remove_rule)
            self._rules.append(rule)
            self._all_rules.append(rule)
            if self._closed:
                rule.wake()
            return rule

    def _admit_fault(self, fault):
        """Raise ValueError for a fault this fake cannot act on (every one, here)."""

    def _remove_rule(self, rule):
        with self._lock:
            if rule in self._rules:
                self._rules.remove(rule)

    def clear_faults(self):
        """Stop choosing any installed fault (held exchanges stay held)."""
        with self._lock:
            for rule in self._rules:
                rule.removed = True
            self._rules = []

    # -- observation
    @property
    def closing(self):
        return self._closing.is_set()

    @property
    def events(self):
        with self._lock:
            return list(self._events)

    def wait_for(self, predicate, timeout, since=0):
        """First event (from index `since`) for which predicate(event) holds.

        Returns the event, or None after `timeout` seconds. The predicate runs
        with the lock held: it must not block.
        """
        deadline = Deadline(timeout)
        i = since
        with self._cond:
            while True:
                while i < len(self._events):
                    ev = self._events[i]
                    i += 1
                    if predicate(ev):
                        return ev
                if deadline.over():
                    return None
                self._cond.wait(deadline.slice())

    def wait_until(self, condition, timeout):
        """True once condition() holds, re-checked after every event."""
        deadline = Deadline(timeout)
        with self._cond:
            while True:
                if condition():
                    return True
                if deadline.over():
                    return False
                self._cond.wait(deadline.slice())

    def _record(self, event):
        with self._cond:
            self._events.append(event)
            self._cond.notify_all()

    # -- lifecycle
    def close(self):
        """End every connection and thread; raise if one will not end."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._closing.set()
            rules = list(self._all_rules)
        for rule in rules:
            rule.wake()
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        deadline = time.monotonic() + CLOSE_JOIN_TIMEOUT_S
        self._accept_thread.join(CLOSE_JOIN_TIMEOUT_S)
        with self._lock:
            threads = list(self._threads)
        self._abort_connections()
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        for s in (self._listener, self._wake_r, self._wake_w):
            try:
                s.close()
            except OSError:
                pass
        stuck = [t.name for t in threads + [self._accept_thread] if t.is_alive()]
        with self._cond:
            self._cond.notify_all()
        if stuck:
            raise RuntimeError("%s: threads still running %.1f s after close(): %s"
                               % (self.name, CLOSE_JOIN_TIMEOUT_S, ", ".join(stuck)))

    def _abort_connections(self):
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _accept_loop(self):
        # A selector, not select(): a harness with many files open may hand
        # out descriptors above FD_SETSIZE.
        sel = selectors.DefaultSelector()
        sel.register(self._listener, selectors.EVENT_READ)
        sel.register(self._wake_r, selectors.EVENT_READ)
        try:
            self._accept_until_closed(sel)
        finally:
            sel.close()

    def _accept_until_closed(self, sel):
        while not self._closing.is_set():
            try:
                ready = [key.fileobj for key, _ev in sel.select()]
            except (OSError, ValueError):
                return
            if self._wake_r in ready or self._closing.is_set():
                return
            try:
                sock, _peer = self._listener.accept()
            except OSError:
                continue
            # Every write goes out at once. With Nagle's algorithm a write that
            # follows another unacknowledged one waits for the client's delayed
            # ACK (40 ms on Linux): a TLS session ticket, then the answer, say.
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
            conn_id = next(self._conn_ids)
            with self._lock:
                self._threads = [t for t in self._threads if t.is_alive()]
                t = self._connection_thread(sock, conn_id)
                self._threads.append(t)
            t.start()

    def _connection_thread(self, sock, conn_id):
        raise NotImplementedError


class LoopbackServer(Listener):
    """A threaded HTTP/1.1 (or HTTPS) server on 127.0.0.1, port 0.

    name            used in thread names and reports.
    tls             serve HTTPS with the test CA's server certificate.
    seed            seeds every fault rule's random draws (Match.probability).
    secret_values   callable returning strings to mask in transcripts.
    server_header   value of the Server header ("" for none).
    cert_chain      (certificate file, key file) to serve instead of the test
                    CA's server certificate: UNTRUSTED_CERT_CHAIN checks that a
                    client verifies what it connects to.

    Two attributes a check may set at any time: ``idle_close_s`` (seconds a
    kept-alive connection may wait for its next request, IDLE_CLOSE_S; None:
    for ever) and ``close_after_each`` (every answer says ``Connection:
    close`` and the connection ends with it).
    """

    def __init__(self, name="server", tls=False, seed=0, secret_values=None, server_header="conformance",
                 cert_chain=None):
        self.tls = tls
        self.server_header = server_header
        self._secret_values = secret_values or (lambda: ())
        self._routes = []
        self._transcript = []
        self._connections = []
        self._conns = {}
        self.in_flight = 0
        self.max_concurrency = 0
        self.idle_close_s = IDLE_CLOSE_S
        self.close_after_each = False
        self._ssl_context = None
        if tls:
            self._ssl_context = _server_context(tuple(cert_chain or (SERVER_CERT_FILE, SERVER_KEY_FILE)))
        Listener.__init__(self, name, seed)
        self.origin = "%s://127.0.0.1:%d" % ("https" if tls else "http", self.port)
        self._start_accepting()

    # -- configuration
    def route(self, method, pattern, handler, raw=False, key=None, key_in_body=False):
        """Add a route; the first route matching method and path glob wins.

        Simple handlers get a Request (with ``body`` read, at most
        MAX_SIMPLE_BODY_BYTES) and return a Reply. Raw handlers (raw=True)
        get the ExchangeContext and stream themselves. ``key(request)`` names
        the exchange for fault matching (default: the decoded path);
        ``key_in_body`` says the key is only known from the body (set_key).
        A GET route also answers HEAD.
        """
        with self._lock:
            self._routes.append(_Route(method, pattern, handler, raw, key, key_in_body))

    def serve_bytes(self, path, data, content_type="application/octet-stream"):
        """GET path answers these bytes (faults apply as to any route)."""
        data = bytes(data)
        self.route("GET", path, lambda req: bytes_reply(data, content_type=content_type))

    def serve_json(self, path, obj):
        self.serve_bytes(path, json.dumps(obj).encode("utf-8"), "application/json")

    def error_body(self, code, message, seq):
        """The error document for a status fault (S3 XML here)."""
        return s3_error_xml(code, message, request_id=self.request_id(seq),
                            host_id=self.host_id(seq))

    def request_id(self, seq):
        return "%016X" % (0xC0F0000000000000 + seq)

    def host_id(self, seq):
        return hashlib.sha256(("%s/%d" % (self.name, seq)).encode()).hexdigest()[:44]

    # -- observation
    @property
    def transcript(self):
        """Every exchange so far, in arrival order (live records)."""
        with self._lock:
            return list(self._transcript)

    @property
    def connections(self):
        with self._lock:
            return list(self._connections)

    def handshakes(self, since=0.0):
        """(full, resumed): TLS handshakes finished on connections accepted at or after `since`."""
        done = [r for r in self.connections if r.t_accept >= since and r.t_tls_done is not None]
        resumed = sum(1 for r in done if r.tls_resumed)
        return len(done) - resumed, resumed

    def mask(self, text):
        return mask_text(text, self._secret_values())

    def _event(self, kind, seq, conn_id, method, key, nbytes=None, detail=None):
        self._record(Event(time.monotonic(), kind, seq, key, method, nbytes, conn_id, detail))

    # -- connections
    def _connection_thread(self, sock, conn_id):
        record = ConnectionRecord(conn_id, time.monotonic(), self.tls)
        conn = _Conn(sock, conn_id, record)
        rule = _faults.select_connection_rule(self._rules)
        self._conns[conn_id] = conn
        self._connections.append(record)
        self._event("connect", None, conn_id, None, None)
        return threading.Thread(target=self._serve_connection, args=(conn, rule),
                                name="%s-conn-%d" % (self.name, conn_id), daemon=True)

    def _abort_connections(self):
        with self._lock:
            conns = list(self._conns.values())
        for conn in conns:
            conn.abort()

    def _serve_connection(self, conn, rule):
        record = conn.record
        try:
            if rule is not None:
                record.fault = rule.fault.describe()
                self._event("fault", None, conn.conn_id, None, None, None, record.fault)
                if not rule.hold():
                    record.outcome = "held"
                    return
            if self.tls:
                sslsock = self._ssl_context.wrap_socket(conn.sock, server_side=True,
                                                        do_handshake_on_connect=False)
                conn.sock = sslsock
                conn.tls = True
                if conn.aborted:
                    return
                sslsock.do_handshake()
                record.tls_resumed = sslsock.session_reused
                record.t_tls_done = time.monotonic()
                self._event("tls-done", None, conn.conn_id, None, None)
            served = 0
            while not self._closing.is_set():
                idle_close_s = self.idle_close_s
                if served and idle_close_s is not None and not conn.idle_wait(idle_close_s):
                    record.outcome = "idle-closed"
                    conn.sent_after_fin(IDLE_CLOSE_LINGER_S)
                    break
                served += 1
                if not self._serve_one(conn):
                    break
        except (OSError, ssl.SSLError, ClientGone, ValueError) as e:
            record.outcome = record.outcome or ("closed" if self.closing else "error: %s" % type(e).__name__)
        except Exception:
            self.errors.append(traceback.format_exc())
            record.outcome = "server-error"
        finally:
            conn.graceful_close()
            record.t_closed = time.monotonic()
            record.outcome = record.outcome or "ok"
            with self._lock:
                self._conns.pop(conn.conn_id, None)
            self._event("closed", None, conn.conn_id, None, None)

    def _parse_head(self, head):
        try:
            text = head.decode("latin-1")
        except UnicodeDecodeError:
            raise BadRequest(400, "undecodable request head")
        lines = text.split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise BadRequest(400, "malformed request line")
        method, target, version = parts
        if not _TOKEN_CHARS.match(method) or not target.startswith("/"):
            raise BadRequest(400, "malformed request line")
        pairs = []
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep or not _TOKEN_CHARS.match(name):
                raise BadRequest(400, "malformed header line")
            pairs.append((name, value.strip(" \t")))
        req = Request(method, target, version, Headers(pairs))
        te = req.headers.get_all("transfer-encoding")
        cls = req.headers.get_all("content-length")
        if te:
            if cls:
                raise BadRequest(400, "both Transfer-Encoding and Content-Length")
            if te[-1].split(",")[-1].strip().lower() != "chunked":
                raise BadRequest(501, "unsupported Transfer-Encoding")
            req.chunked = True
        elif cls:
            values = set(v.strip() for c in cls for v in c.split(","))
            if len(values) != 1 or not next(iter(values)).isdigit():
                raise BadRequest(400, "bad Content-Length")
            req.content_length = int(values.pop())
        return req

    def _find_route(self, req):
        with self._lock:
            for r in self._routes:
                if r.matches(req.method, req.path):
                    return r
        return None

    def _serve_one(self, conn):
        """One request on a connection; True to read another."""
        try:
            head = conn.read_head()
        except BadRequest as e:
            body = str(e).encode()
            conn.send(("HTTP/1.1 %d %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                       % (e.status, reason_phrase(e.status), len(body))).encode() + body)
            return False
        except ClientGone:
            return False
        if head is None:
            return False
        t_start = time.monotonic()
        seq = next(self._seq)
        conn.record.requests += 1
        try:
            req = self._parse_head(head)
        except BadRequest as e:
            ex = Exchange(seq, conn.conn_id, "-", "-", None, [], t_start, status=e.status,
                          outcome="bad-request", t_end=time.monotonic())
            ex.notes["error"] = str(e)
            with self._lock:
                self._transcript.append(ex)
            body = str(e).encode()
            conn.send(("HTTP/1.1 %d %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                       % (e.status, reason_phrase(e.status), len(body))).encode() + body)
            return False
        secrets = list(self._secret_values())
        masked_headers = []
        for name, value in req.headers:
            if any(w in name.lower() for w in _SECRET_HEADER_WORDS):
                value = MASK
            else:
                value = mask_text(value, secrets)
            masked_headers.append((name, value))
        route = self._find_route(req)
        if route is not None and route.key is not None:
            key = route.key(req)
        elif route is not None and route.key_in_body:
            key = None
        else:
            key = req.path
        ex = Exchange(seq, conn.conn_id, req.method,
                      req.raw_path + ("?" + MASK if req.has_query else ""), key, masked_headers,
                      t_start, query_names=[k for k, _ in req.query_list])
        ctx = ExchangeContext(self, conn, req, ex)
        with self._lock:
            self._transcript.append(ex)
            self.in_flight += 1
            self.max_concurrency = max(self.max_concurrency, self.in_flight)
        ctx.event("request")
        if ctx.body.finished:
            ctx._mark_body_done()
        keep = False
        try:
            ctx.select_fault("keyless" if route is not None and route.key_in_body else "all")
            if route is None:
                ctx.body.drain()
                ctx.body_finished()
                ctx.respond(404, [("Content-Type", "text/plain")], body=b"no route\n")
            elif route.raw:
                route.handler(ctx)
                if not ctx.responded:
                    raise RuntimeError("raw route %s %s did not respond" % (route.method, route.pattern))
            else:
                self._run_simple(ctx, route)
            ex.outcome = "ok"
            keep = ctx.keep_alive
        except ExchangeEnded as e:
            ex.outcome = e.outcome
            keep = e.keep_alive
        except BadRequest as e:
            ex.outcome = "bad-request"
            ex.notes["error"] = str(e)
        except (ClientGone, OSError, ssl.SSLError) as e:
            ex.outcome = "closed" if self.closing else "client-gone"
            ex.notes["error"] = "%s: %s" % (type(e).__name__, e)
        except Exception:
            self.errors.append(traceback.format_exc())
            ex.outcome = "server-error"
            if not ctx.responded and ex.t_headers_sent is None:
                try:
                    conn.send(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n"
                              b"Connection: close\r\n\r\n")
                    ex.status = 500
                except OSError:
                    pass
        finally:
            ex.req_bytes = ctx.body.consumed
            ex.t_end = time.monotonic()
            ctx.leave_flight()
            ctx.event("done", ex.resp_bytes, ex.outcome)
        return keep and not conn.closed and not self.closing

    def _run_simple(self, ctx, route):
        req = ctx.request
        buf = bytearray(min(MAX_SIMPLE_BODY_BYTES + 1, max(1, req.content_length or 65536)))
        data = bytearray()
        mv = memoryview(buf)
        while True:
            n = ctx.body.readinto(mv)
            if n == 0:
                break
            data += mv[:n]
            if len(data) > MAX_SIMPLE_BODY_BYTES:
                ctx.body.drain()
                ctx.body_finished()
                ctx.respond(413, [("Content-Type", "text/plain")], body=b"body too large\n")
                return
        ctx.body_finished()
        req.body = bytes(data)
        if ctx.refused:
            ctx.respond(500)  # replaced by the fault's answer
            return
        reply = route.handler(req)
        ctx.respond(reply.status, reply.headers, body=reply.body)
