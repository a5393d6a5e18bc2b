"""A forward proxy for the harness: CONNECT tunnels and absolute-form HTTP.

    proxy = ProxyServer("proxy", credentials=("CANARYuser...", "CANARYpassword..."))
    env["HTTPS_PROXY"] = proxy.url()           # http://user:password@127.0.0.1:PORT
    proxy.add_fault(faults.status(407), Match(method="CONNECT", first=1))
    ... run the node ...
    proxy.requests                             # ProxyRequest records, in arrival order
    proxy.close()

It listens on 127.0.0.1, port 0, one thread per connection, and reads one
request head per connection (at most MAX_HEAD_BYTES), which it records. Then:

* ``CONNECT host:port``: it opens TCP to the target, answers
  ``200 Connection established`` (or ``tunnel_reply``'s bytes: another form
  of the same answer, such as an HTTP/1.0 head with bare LF line ends) and
  relays bytes both ways until both sides have ended (a TLS session passes
  through untouched);
* ``METHOD http://host[:port]/path``: it opens TCP to the origin, sends the
  request on in origin form without the proxy's own headers
  (Proxy-Authorization, Proxy-Connection), and relays both ways;
* anything else: 400.

The upstream is always a loopback address: a name in ``hosts`` maps to an
address the check chose (so a name no resolver knows can still be served),
any other name is looked up; a target that does not resolve to loopback, or
refuses, is answered 502, as a real proxy answers.

With ``credentials`` (user, password), a request without the matching
``Proxy-Authorization: Basic ...`` is answered 407 with Proxy-Authenticate.
Every request's credentials are recorded decoded, so a check can tell a
missing header from a wrong one.

Faults come in as in every fake, ``add_fault(fault, match=None)`` with the
vocabulary of conformance.faults. A Match's method is the request's method
(``CONNECT``, ``GET``, ...), its key the request target without its query
(``127.0.0.1:4431``, ``http://127.0.0.1:8080/inputs/0/a.csv``). The proxy
acts on these kinds, at the request head, before serving:

    status(code)    answer this status instead (407, 403, 502 ...): a refusal
    hang()          accept the request, never answer (until released or closed)
    reset(0)        close the connection with RST, no byte of answer
    delay(seconds)  wait, then serve as usual

Times are time.monotonic(). Events (``wait_for``): connect, request, fault,
answer (detail: the status sent), done (detail: outcome).
"""

import base64
import collections
import http
import selectors
import socket
import struct
import threading
import time
import traceback
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from conformance import faults as _faults
from conformance.servers import MASK, Listener
from conformance.timeouts import SHORT_TIMEOUT_S

__all__ = ["ProxyServer", "ProxyRequest", "KINDS"]

# A request line and headers longer than this are answered 431.
MAX_HEAD_BYTES = 64 * 1024
# Bytes moved per relay read.
RELAY_BLOCK_BYTES = 64 * 1024
# Fault kinds the proxy acts on (see the module docstring).
KINDS = frozenset(["status", "hang", "reset", "delay"])
_HOP_HEADERS = ("proxy-authorization", "proxy-connection")

ProxyEvent = collections.namedtuple("ProxyEvent", "t kind seq method key detail")


@dataclass
class ProxyRequest:
    """One request the proxy read, and what became of it.

    target is as sent with any query masked; key is the target without its
    query (what a Match's key glob sees); host and port are where the
    request was meant to go. authorization is True when a
    Proxy-Authorization header came, credentials its decoded (user,
    password) when it was Basic. status is what the proxy answered (200 for
    an open tunnel, None when it answered nothing). outcome: "tunnel",
    "forwarded", "refused", "held", "reset", "bad-request", "bad-gateway",
    "closed".
    """
    seq: int
    conn_id: int
    t_start: float
    method: str
    target: str
    key: str
    version: str
    host: Optional[str] = None
    port: Optional[int] = None
    absolute: bool = False
    host_header: Optional[str] = None
    authorization: bool = False
    credentials: Optional[Tuple[str, str]] = None
    fault: Optional[str] = None
    status: Optional[int] = None
    outcome: Optional[str] = None
    t_answer: Optional[float] = None
    t_end: Optional[float] = None
    bytes_up: int = 0
    bytes_down: int = 0
    notes: Dict[str, Any] = field(default_factory=dict)


class _Ended(Exception):
    """The exchange is over (answered, refused, held or reset)."""


class ProxyServer(Listener):
    """See the module docstring.

    name         used in thread names and reports.
    credentials  (user, password) the proxy demands, or None for an open proxy.
    hosts        {name: address}: where the proxy sends a name (loopback only).
    seed         seeds the fault rules' random draws.
    tunnel_reply the whole head (bytes, blank line included) that opens a
                 tunnel, instead of the usual one; also an attribute.
    """

    def __init__(self, name="proxy", credentials=None, hosts=None, seed=0, tunnel_reply=None):
        self.credentials = tuple(credentials) if credentials else None
        self.tunnel_reply = tunnel_reply
        self.hosts = dict((k.lower(), v) for k, v in (hosts or {}).items())
        self._requests = []
        self._sockets = set()
        self.connections = 0
        Listener.__init__(self, name, seed)
        self._start_accepting()

    # ------------------------------------------------------------ configuration
    def url(self, credentials=True):
        """http://[user:password@]127.0.0.1:PORT, the value of a proxy variable.
        User and password are percent-encoded, as a URL must carry them."""
        userinfo = ""
        if credentials and self.credentials:
            userinfo = "%s:%s@" % tuple(urllib.parse.quote(v, safe="") for v in self.credentials)
        return "http://%s127.0.0.1:%d" % (userinfo, self.port)

    def secrets(self):
        """Every form in which the proxy's credentials could leak: as given,
        percent-encoded (in the URL), and as the Basic token."""
        if not self.credentials:
            return []
        user, password = self.credentials
        token = base64.b64encode(("%s:%s" % (user, password)).encode("utf-8")).decode("ascii")
        values = [user, password, urllib.parse.quote(user, safe=""), urllib.parse.quote(password, safe=""), token]
        return list(dict.fromkeys(values))

    def _admit_fault(self, fault):
        """The proxy acts on the kinds in KINDS only, at the request head."""
        if fault.kind not in KINDS:
            raise ValueError("the proxy does not act on %r faults (it knows %s)"
                             % (fault.kind, ", ".join(sorted(KINDS))))
        if fault.kind == "reset" and fault.after_bytes:
            raise ValueError("the proxy resets before answering: reset(0) only")

    # ------------------------------------------------------------ observation
    @property
    def requests(self):
        with self._lock:
            return list(self._requests)

    def tunnels(self):
        """CONNECT requests the proxy answered 200."""
        return [r for r in self.requests if r.method == "CONNECT" and r.status == 200]

    def forwarded(self):
        """Absolute-form requests the proxy sent on to their origin."""
        return [r for r in self.requests if r.outcome == "forwarded"]

    def describe(self, limit=8):
        """A short account of the requests, for a report (no credential in it)."""
        parts = ["%s %s -> %s%s" % (r.method, r.target, r.status if r.status is not None else "-",
                                    " (%s)" % r.outcome if r.outcome not in (None, "tunnel", "forwarded") else "")
                 for r in self.requests[-limit:]]
        return "; ".join(parts) or "no request"

    def _event(self, kind, request=None, detail=None):
        self._record(ProxyEvent(time.monotonic(), kind, request.seq if request else None,
                                request.method if request else None, request.key if request else None, detail))

    # ------------------------------------------------------------ connections
    def _connection_thread(self, sock, conn_id):
        self.connections += 1
        self._sockets.add(sock)
        self._event("connect")
        return threading.Thread(target=self._serve, args=(sock, conn_id),
                                name="%s-conn-%d" % (self.name, conn_id), daemon=True)

    def _abort_connections(self):
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            _shutdown(sock)

    def _track(self, sock):
        with self._lock:
            self._sockets.add(sock)
            if self._closing.is_set():
                _shutdown(sock)

    def _forget(self, sock):
        with self._lock:
            self._sockets.discard(sock)
        try:
            sock.close()
        except OSError:
            pass

    def _serve(self, client, conn_id):
        upstream = None
        request = None
        try:
            head, rest = self._read_head(client)
            if head is None:
                return
            request = self._parse(head, conn_id)
            with self._lock:
                self._requests.append(request)
            self._event("request", request)
            if request.outcome == "bad-request":
                self._answer(client, request, 400, "Bad Request")
                return
            self._apply_fault(client, request)
            if self.credentials and request.credentials != self.credentials:
                self._answer(client, request, 407, "Proxy Authentication Required",
                             [("Proxy-Authenticate", 'Basic realm="conformance"')])
                request.outcome = "refused"
                return
            upstream = self._connect_upstream(request)
            if upstream is None:
                self._answer(client, request, 502, "Bad Gateway")
                request.outcome = "bad-gateway"
                return
            if request.method == "CONNECT" and self.tunnel_reply is not None:
                self._answer_raw(client, request, 200, self.tunnel_reply)
                request.outcome = "tunnel"
                if rest:
                    upstream.sendall(rest)
                    request.bytes_up += len(rest)
            elif request.method == "CONNECT":
                self._answer(client, request, 200, "Connection established", close=False)
                request.outcome = "tunnel"
                if rest:
                    upstream.sendall(rest)
                    request.bytes_up += len(rest)
            else:
                upstream.sendall(self._origin_head(head, request) + rest)
                request.bytes_up += len(rest)
                request.outcome = "forwarded"
            self._relay(client, upstream, request)
        except _Ended:
            pass
        except OSError as exc:
            if request is not None and request.outcome in (None, "tunnel", "forwarded"):
                request.notes["error"] = "%s: %s" % (type(exc).__name__, exc)
                if request.outcome is None:
                    request.outcome = "closed"
        except Exception:
            self.errors.append(traceback.format_exc())
        finally:
            if upstream is not None:
                self._forget(upstream)
            self._forget(client)
            if request is not None:
                request.t_end = time.monotonic()
                self._event("done", request, request.outcome)

    def _read_head(self, client):
        """(head bytes without the blank line, bytes after it), or (None, b"") on EOF first."""
        data = bytearray()
        while True:
            end = data.find(b"\r\n\r\n")
            if end >= 0:
                return bytes(data[:end]), bytes(data[end + 4:])
            if len(data) > MAX_HEAD_BYTES:
                client.sendall(b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n"
                               b"Connection: close\r\n\r\n")
                return None, b""
            chunk = client.recv(65536)
            if not chunk:
                return None, b""
            data += chunk

    def _parse(self, head, conn_id):
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        method, target, version = parts if len(parts) == 3 else ("-", "-", "-")
        key = target.split("?", 1)[0]
        shown = key + ("?" + MASK if "?" in target else "")
        request = ProxyRequest(next(self._seq), conn_id, time.monotonic(), method, shown, key, version)
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            value = value.strip()
            if name.lower() == "host":
                request.host_header = value
            elif name.lower() == "proxy-authorization":
                request.authorization = True
                scheme, _, token = value.partition(" ")
                if scheme.lower() == "basic":
                    try:
                        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
                        user, colon, password = decoded.partition(":")
                    except (ValueError, UnicodeDecodeError):
                        colon = ""
                    if colon:
                        request.credentials = (user, password)
        if not version.startswith("HTTP/1."):
            request.outcome = "bad-request"
        elif method == "CONNECT":
            host, port = _split_authority(target)
            if host is None:
                request.outcome = "bad-request"
            request.host, request.port = host, port
        elif target.lower().startswith("http://"):
            parsed = urllib.parse.urlsplit(target)
            try:
                request.host, request.port = parsed.hostname, parsed.port or 80
            except ValueError:
                request.outcome = "bad-request"
            request.absolute = True
            if not request.host:
                request.outcome = "bad-request"
        else:
            request.outcome = "bad-request"  # origin form (or https://) sent to a proxy
        return request

    def _apply_fault(self, client, request):
        with self._lock:
            rule = _faults.select_rule(self._rules, request.method, request.key)
        if rule is None:
            return
        fault = rule.fault
        request.fault = fault.describe("request")
        self._event("fault", request, request.fault)
        if fault.kind == "delay":
            if self._closing.wait(fault.seconds):
                request.outcome = "closed"
                raise _Ended()
            return
        if fault.kind == "hang":
            request.outcome = "held"
            if rule.hold():  # released with answer=True: serve after all
                request.outcome = None
                return
            raise _Ended()
        if fault.kind == "reset":
            request.outcome = "reset"
            try:
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
            raise _Ended()
        body = fault.body if fault.body is not None else ("%d refused by the harness's proxy\n" % fault.code).encode()
        self._answer(client, request, fault.code, fault.reason or _reason(fault.code), body=body)
        request.outcome = "refused"
        raise _Ended()

    def _answer(self, client, request, status, reason, headers=(), body=b"", close=True):
        lines = ["HTTP/1.1 %d %s" % (status, reason)] + ["%s: %s" % pair for pair in headers]
        if close:
            lines += ["Content-Length: %d" % len(body), "Connection: close"]
        request.status = status
        request.t_answer = time.monotonic()
        client.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body if close else b""))
        self._event("answer", request, status)

    def _answer_raw(self, client, request, status, head):
        """Send `head` as it is: an answer whose form the check chose."""
        request.status = status
        request.t_answer = time.monotonic()
        client.sendall(head)
        self._event("answer", request, status)

    def _connect_upstream(self, request):
        host = self.hosts.get(request.host.lower(), request.host)
        try:
            infos = socket.getaddrinfo(host, request.port, 0, socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            request.notes["upstream"] = "does not resolve"
            return None
        for family, kind, proto, _name, address in infos:
            if not _loopback(address[0]):
                request.notes["upstream"] = "not a loopback address"
                continue
            sock = socket.socket(family, kind, proto)
            self._track(sock)
            try:
                sock.settimeout(SHORT_TIMEOUT_S)
                sock.connect(address)
                sock.settimeout(None)
                return sock
            except OSError as exc:
                request.notes["upstream"] = "%s: %s" % (type(exc).__name__, exc)
                self._forget(sock)
        return None

    def _origin_head(self, head, request):
        """The request head as the origin must see it: origin form, no hop headers."""
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ")
        parsed = urllib.parse.urlsplit(target)
        origin_target = (parsed.path or "/") + ("?" + parsed.query if parsed.query else "")
        kept = [line for line in lines[1:] if line.partition(":")[0].strip().lower() not in _HOP_HEADERS]
        return ("\r\n".join(["%s %s %s" % (method, origin_target, version)] + kept) + "\r\n\r\n").encode("latin-1")

    def _relay(self, client, upstream, request):
        """Copy bytes both ways until both directions have ended."""
        selector = selectors.DefaultSelector()
        selector.register(client, selectors.EVENT_READ, (upstream, "bytes_up"))
        selector.register(upstream, selectors.EVENT_READ, (client, "bytes_down"))
        try:
            open_ends = 2
            while open_ends and not self._closing.is_set():
                for key, _ in selector.select():
                    source = key.fileobj
                    destination, counter = key.data
                    try:
                        data = source.recv(RELAY_BLOCK_BYTES)
                    except OSError:
                        data = b""
                    if not data:
                        selector.unregister(source)
                        open_ends -= 1
                        try:
                            destination.shutdown(socket.SHUT_WR)
                        except OSError:
                            pass
                        continue
                    destination.sendall(data)
                    setattr(request, counter, getattr(request, counter) + len(data))
        finally:
            selector.close()


def _reason(code):
    try:
        return http.HTTPStatus(code).phrase
    except ValueError:
        return "Unknown"


def _split_authority(text):
    """(host, port) of a CONNECT target `host:port` or `[v6]:port`; (None, None) if malformed."""
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or not rest.startswith(":"):
            return None, None
        port = rest[1:]
    else:
        host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        return None, None
    return host, int(port)


def _loopback(address):
    return address.startswith("127.") or address == "::1"


def _shutdown(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass

