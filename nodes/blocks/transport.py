"""Shared block `transport`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
The `from nodes.blocks...` lines exist only for this standalone copy: inside a
node the blocks share one namespace.
"""
import collections
import errno
import http.client
import os
import select
import socket
import ssl
import threading
import time
import urllib.parse

from nodes.blocks.deadline import Deadline, sooner
from nodes.blocks.stop import StopRequested

# ---- block body ----
# transport: HTTP/1.1 exchanges on sockets the node can always reach (the
# keepalive block's KeptExchange, a subclass, keeps a connection for the next
# exchange to the same origin).  Name lookup, TCP connect over every address
# and the TLS handshake share one elapsed deadline and each wait also watches
# the stop wakeup fd; once connected the socket sits on the stop ledger, so a
# stop (or a watchdog) ends a blocked read or write with shutdown().
# http.client only formats requests and parses responses: it never opens a
# connection itself.
#
# Proxies are opt-in, per exchange, and live in their own block (proxy): this
# one only calls the methods of the proxy it is handed (pick, tunnel,
# forward_target, forwarding_connection), so a node that must never use a
# proxy passes none and embeds no proxy code.  With a proxy, TCP goes to the
# proxy; an https target is reached through its CONNECT tunnel, inside the
# same deadline, every wait stoppable; an http target's request goes to the
# proxy in absolute form.

Target = collections.namedtuple("Target", "scheme host port request_target")

_FORBIDDEN_IN_TARGET = frozenset(" \t\r\n\x00")


def split_url(url):
    """Target of an http(s) URL; ValueError otherwise.

    The error never quotes the URL: its query string may be a credential.
    """
    if not isinstance(url, str) or not url:
        raise ValueError("not a non-empty string")
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ValueError("scheme is not http or https")
    host, port = host_and_port(parts)
    if port is None:
        port = 443 if scheme == "https" else 80
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    if _FORBIDDEN_IN_TARGET.intersection(target) or _FORBIDDEN_IN_TARGET.intersection(host):
        raise ValueError("whitespace or control characters in the URL")
    return Target(scheme, host, port, target)


def host_and_port(parts):
    """(host, port or None) of urlsplit() parts; ValueError without the URL in it."""
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ValueError("port is not a number from 0 to 65535") from None
    if not host:
        raise ValueError("no host")
    return host, port


def wait_ready(stop, readable, writable, deadline, what):
    """Block until an fd is ready; StopRequested on a stop, TimeoutError at the deadline."""
    wake = stop.wait_fd()
    watch = list(readable) + ([wake] if wake is not None else [])
    while True:
        if stop.should_abandon():
            raise StopRequested("stop requested during " + what)
        remaining = deadline.remaining()
        if remaining <= 0:
            raise TimeoutError("%s did not finish within %gs" % (what, deadline.seconds))
        ready_r, ready_w, _ = select.select(watch, writable, [], remaining)
        if wake is not None and wake in ready_r:
            if stop.should_abandon():
                raise StopRequested("stop requested during " + what)
            ready_r.remove(wake)
        if ready_r or ready_w:
            return


def resolve(host, port, stop, deadline):
    """getaddrinfo() bounded by `deadline` and a stop.

    getaddrinfo() takes no timeout and has no socket to shut down, so a name
    (not an address literal) is looked up in a daemon thread while this thread
    waits in select().  A lookup that hangs leaves that thread behind, which
    only happens on a run that is failing anyway.
    """
    try:
        return socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
    except socket.gaierror:
        pass  # a name, not an address literal
    result = {}
    done_r, done_w = os.pipe()

    def lookup():
        try:
            result["addresses"] = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
        except Exception as exc:
            result["error"] = exc
        finally:
            try:
                os.write(done_w, b".")
            except OSError:
                pass  # the waiter gave up and closed its end
            os.close(done_w)

    threading.Thread(target=lookup, name="resolve", daemon=True).start()
    try:
        wait_ready(stop, [done_r], [], deadline, "name lookup of %s" % host)
    finally:
        os.close(done_r)
    if "error" in result:
        raise result["error"]
    return result["addresses"]


def _connect_one(sock, address, stop, deadline):
    sock.setblocking(False)
    code = sock.connect_ex(address)
    if code in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN, errno.EALREADY):
        wait_ready(stop, [], [sock], deadline, "connect")
        code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if code:
        raise OSError(code, os.strerror(code))


def _handshake(tls, stop, deadline):
    while True:
        try:
            tls.do_handshake()
            return
        except ssl.SSLWantReadError:
            wait_ready(stop, [tls], [], deadline, "TLS handshake")
        except ssl.SSLWantWriteError:
            wait_ready(stop, [], [tls], deadline, "TLS handshake")


def open_socket(target, stop, deadline, ssl_context=None, addresses=None, proxy=None, tls_session=None):
    """A connected (and, with `ssl_context`, TLS-wrapped) socket on the ledger.

    One deadline covers the lookup, every address in turn (each gets only what
    is left, so N addresses cannot take N timeouts), a proxy's CONNECT and the
    handshake.  The returned socket is non-blocking; the caller sets its
    timeout.  A stop during any of it, or found once it is done, raises
    StopRequested and no byte of a request goes out.

    `addresses` (getaddrinfo() entries) replaces the lookup for a caller that
    has judged the addresses itself: only those are tried, while the TLS server
    name and the certificate's host stay `target.host`.

    `proxy` (a Proxy of the proxy block) makes the TCP peer the proxy
    (`addresses` are then the proxy's); with `ssl_context` the TLS session
    runs through the tunnel its tunnel() opens to `target`, still verified
    against `target.host`.  Without `ssl_context` the caller sends its
    request to the proxy in absolute form (HttpExchange does).

    `tls_session` (an SSLSession of an earlier connection to `target`) is
    offered for resumption: an abbreviated handshake when the server still
    knows it, a full one otherwise.
    """
    stop.check("opening a connection")
    peer = target if proxy is None else proxy  # whom TCP connects to
    if addresses is None:
        addresses = resolve(peer.host, peer.port, stop, deadline)
    sock, last_error = None, None
    for family, kind, proto, _name, address in addresses:
        if deadline.expired():
            break
        try:
            candidate = socket.socket(family, kind, proto)
        except OSError as exc:  # no IPv6 on this host, say: the next address may still do
            last_error = exc
            continue
        stop.track(candidate)
        try:
            _connect_one(candidate, address, stop, deadline)
        except OSError as exc:  # TimeoutError included: try what time is left on the next
            stop.untrack(candidate)
            candidate.close()
            last_error = exc
            continue
        except BaseException:
            stop.untrack(candidate)
            candidate.close()
            raise
        # A request's head and body go out in two writes; without TCP_NODELAY the body waits
        # for the peer's delayed ACK (about 40 ms on Linux). HTTPConnection.connect() would
        # set it, but this socket is made here, so it is set here.
        candidate.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock = candidate
        break
    if sock is None:
        stop.check("opening a connection")  # a stop shuts the socket: the error it leaves is the stop's
        if last_error is not None and not isinstance(last_error, TimeoutError):
            raise last_error
        raise TimeoutError("no address of %s:%d accepted a connection within %gs"
                           % (peer.host, peer.port, deadline.seconds))
    if proxy is not None and ssl_context is not None:
        try:
            proxy.tunnel(sock, target, stop, deadline)
        except BaseException as exc:
            stop.untrack(sock)
            sock.close()
            if isinstance(exc, OSError):
                stop.check("the proxy's CONNECT")  # the end of file a stop's shutdown leaves is the stop's
            raise
    if ssl_context is not None:
        stop.untrack(sock)
        try:
            # wrap_socket() detaches `sock`; from here only `tls` owns the fd.
            tls = ssl_context.wrap_socket(sock, server_hostname=target.host,
                                          do_handshake_on_connect=False, session=tls_session)
        except BaseException:
            sock.close()
            raise
        stop.track(tls)
        try:
            _handshake(tls, stop, deadline)
        except BaseException as exc:
            stop.untrack(tls)
            tls.close()
            if isinstance(exc, OSError):
                stop.check("the TLS handshake")  # the error a stop's shutdown leaves is the stop's
            raise
        sock = tls
    try:
        stop.check("sending a request")
    except StopRequested:
        stop.untrack(sock)
        sock.close()
        raise
    return sock


def close_quietly(sock):
    try:
        sock.close()
    except OSError:
        pass


class HttpExchange(object):
    """One request and its response, on a connection a stop can end.

        exchange = HttpExchange(url, stop, timeout_s=25, connect_deadline_s=10)
        exchange.open()          # lookup + connect + TLS; raises before any byte is sent
        exchange.conn.putrequest("GET", exchange.target.request_target)
        ...
        exchange.close()         # always

    `conn` is an http.client connection whose socket is ours: http.client
    drops its own reference once a response exists, we keep `sock` on the
    ledger until close().  `budget`, an outer Deadline, tightens the connect
    deadline and caps the socket timeout; enforcing it while blocked is the
    caller's Watchdog's job (its `on_expiry`: cut()).

    `proxies` (a Proxies of the proxy block) opts this exchange into
    proxies: `proxy` is then the one NO_PROXY leaves for this URL, or None.
    Through a proxy, an http URL's `target.request_target` is absolute-form,
    so callers send it unchanged.  _connect() and _release() are where a
    subclass takes and keeps connections (the keepalive block's KeptExchange).
    """

    def __init__(self, url, stop, timeout_s, connect_deadline_s, budget=None, ssl_context_factory=None,
                 proxies=None):
        self.target = split_url(url)
        self.stop = stop
        self.timeout_s = timeout_s
        self.connect_deadline_s = connect_deadline_s
        self.budget = budget
        self.ssl_context_factory = ssl_context_factory or ssl.create_default_context
        self.proxy = proxies.pick(self.target) if proxies is not None else None
        if self.proxy is not None and self.target.scheme == "http":
            self.target = self.proxy.forward_target(self.target)
        self.sock = None
        self.conn = None
        self.was_cut = False

    def open(self):
        deadline = sooner(Deadline(self.connect_deadline_s), self.budget)
        context = self.ssl_context_factory() if self.target.scheme == "https" else None
        self.sock = self._connect(deadline, context)
        timeout = self.timeout_s
        if self.budget is not None:
            timeout = max(0.05, min(timeout, self.budget.remaining()))
        self.sock.settimeout(timeout)
        if context is not None:
            self.conn = http.client.HTTPSConnection(self.target.host, self.target.port,
                                                    timeout=timeout, context=context)
        elif self.proxy is not None:
            self.conn = self.proxy.forwarding_connection(self.target, timeout)
        else:
            self.conn = http.client.HTTPConnection(self.target.host, self.target.port, timeout=timeout)
        self.conn.sock = self.sock
        self.conn.auto_open = 0  # never let http.client open a connection behind our back
        self.conn.close = self._drop_socket  # nor close ours (after `Connection: close`): close() decides
        return self

    def _connect(self, deadline, context):
        return open_socket(self.target, self.stop, deadline, context, proxy=self.proxy)

    def _drop_socket(self):
        if self.conn is not None:
            self.conn.sock = None

    def cut(self):
        """End any blocked read or write now, from any thread (a watchdog's `on_expiry`)."""
        self.was_cut = True
        sock = self.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except (OSError, ValueError):
                pass

    def close(self):
        self._drop_socket()
        if self.sock is not None:
            self.stop.untrack(self.sock)
            self._release(self.sock)
            self.sock = None

    def _release(self, sock):
        close_quietly(sock)


def close_quietly(sock):
    try:
        sock.close()
    except OSError:
        pass
