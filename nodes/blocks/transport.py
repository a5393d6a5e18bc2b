"""Shared block `transport`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
The `from nodes.blocks...` lines exist only for this standalone copy: inside a
node the blocks share one namespace.
"""
import base64
import collections
import errno
import http.client
import os
import select
import socket
import ssl
import threading
import urllib.parse

from nodes.blocks.deadline import Deadline, sooner
from nodes.blocks.stop import StopRequested

# ---- block body ----
# transport: one HTTP/1.1 exchange per connection, on a socket the node can
# always reach.  Name lookup, TCP connect over every address and the TLS
# handshake share one elapsed deadline and each wait also watches the stop
# wakeup fd; once connected the socket sits on the stop ledger, so a stop (or
# a watchdog) ends a blocked read or write with shutdown().  http.client only
# formats requests and parses responses: it never opens a connection itself.
#
# Proxies are opt-in, per exchange: a node that must never use one passes none
# and the rest behaves as if this part did not exist.  With a proxy, TCP goes
# to the proxy; an https target is reached through a CONNECT tunnel, inside
# the same deadline, every wait stoppable; an http target's request goes to
# the proxy in absolute form.  Proxy credentials never appear in a message.

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
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ValueError("port is not a number from 0 to 65535") from None
    if not host:
        raise ValueError("no host")
    if port is None:
        port = 443 if scheme == "https" else 80
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    if _FORBIDDEN_IN_TARGET.intersection(target) or _FORBIDDEN_IN_TARGET.intersection(host):
        raise ValueError("whitespace or control characters in the URL")
    return Target(scheme, host, port, target)


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


# -- proxies ---------------------------------------------------------------
# The variables are read as urllib reads them (the upstream's ProxyHandler):
# a lowercase name wins over its uppercase form, an empty lowercase one turns
# the proxy off, and HTTP_PROXY is ignored when REQUEST_METHOD is set (a CGI
# script gets a client's "Proxy:" header as HTTP_PROXY, CVE-2016-1000110).
# NO_PROXY is matched as curl matches it: by whole domain labels, never by
# substring, and an address only by itself.

_PROXY_REPLY_MAX_BYTES = 65536  # a CONNECT reply's status line and headers; more is not a proxy talking


class Proxy(collections.namedtuple("Proxy", "host port authorization credentials")):
    """A proxy: where it is, the Proxy-Authorization value to send (None
    without credentials) and the credential strings a log must never show.
    Its repr() shows neither."""

    __slots__ = ()

    def __repr__(self):
        return "Proxy(host=%r, port=%r%s)" % (self.host, self.port,
                                              ", with credentials" if self.authorization else "")


class ProxyConfigError(ValueError):
    """A proxy variable that cannot be used; the message names it, never its value."""


def parse_proxy_url(url):
    """The Proxy of `http://[user:password@]host[:port]` (port 80 by default).

    ValueError for anything else; the message never quotes the URL, which
    may carry a password.  User and password are percent-decoded, as urllib
    does, before they go into the Basic credentials.
    """
    if not isinstance(url, str) or not url:
        raise ValueError("not a non-empty string")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() != "http":
        raise ValueError("only http:// proxies are supported")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("a proxy URL has no path, query or fragment")
    if _FORBIDDEN_IN_TARGET.intersection(parts.netloc):
        raise ValueError("whitespace or control characters in the proxy URL")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ValueError("port is not a number from 0 to 65535") from None
    if not host:
        raise ValueError("no host")
    authorization, credentials = None, ()
    if parts.username is not None:
        user = urllib.parse.unquote(parts.username)
        password = urllib.parse.unquote(parts.password or "")
        token = base64.b64encode(("%s:%s" % (user, password)).encode("utf-8")).decode("ascii")
        authorization = "Basic " + token
        credentials = tuple(v for v in (parts.username, parts.password, user, password, token, authorization) if v)
    return Proxy(host, 80 if port is None else port, authorization, credentials)


def _proxy_variables(environ):
    """{"http"|"https"|"no": (variable name, value)}, by urllib's precedence."""
    found = {}
    for name, value in environ.items():  # first pass: any case
        if value and name.lower().endswith("_proxy"):
            found[name.lower()[:-6]] = (name, value)
    if "REQUEST_METHOD" in environ:  # a CGI script: HTTP_PROXY may come from a client
        found.pop("http", None)
    for name, value in environ.items():  # second pass: lowercase names win, empty ones unset
        if name.endswith("_proxy"):
            if value:
                found[name.lower()[:-6]] = (name, value)
            else:
                found.pop(name.lower()[:-6], None)
    return dict((k, v) for k, v in found.items() if k in ("http", "https", "no"))


def _ip_literal(host):
    """The packed address of an IPv4 or IPv6 literal, else None."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            return socket.inet_pton(family, host)
        except (OSError, ValueError):
            pass
    return None


def _no_proxy_entry(item):
    """(name, port or None, packed address or None) of one NO_PROXY entry; None if unusable."""
    port = None
    if item.startswith("["):  # [v6] or [v6]:port
        host, bracket, rest = item[1:].partition("]")
        if not bracket or (rest and not (rest[:1] == ":" and rest[1:].isdigit())):
            return None
        port = int(rest[1:]) if rest else None
    elif item.count(":") == 1:  # name:port or v4:port; more colons is a bare IPv6 address
        host, _, text = item.partition(":")
        if not text.isdigit():
            return None
        port = int(text)
    else:
        host = item
    host = host.strip(".")  # ".example.com" is "example.com"; a trailing dot is the root
    if not host or (port is not None and port > 65535):
        return None
    return host, port, _ip_literal(host)


class Proxies(object):
    """The proxies an environment names, and its NO_PROXY list.

        proxies = Proxies.from_environ(os.environ)   # ProxyConfigError names a bad variable
        proxy = proxies.pick(split_url(url))         # a Proxy, or None: connect directly

    NO_PROXY: entries separated by commas or spaces, compared without regard
    to case.  `*` alone means no proxy for any host.  A name matches itself
    and every name under it (`example.com` and `.example.com` both match
    `a.example.com`, neither matches `badexample.com`); an IP address matches
    only that address (IPv6 bracketed or not); `:port` limits an entry to
    that port.
    """

    def __init__(self, http=None, https=None, no_proxy=""):
        self.by_scheme = {"http": http, "https": https}
        text = (no_proxy or "").strip()
        self.bypass_all = text == "*"
        entries = (_no_proxy_entry(item) for item in text.lower().replace(",", " ").split())
        self.no_proxy = tuple(entry for entry in entries if entry is not None)

    @classmethod
    def from_environ(cls, environ):
        found = _proxy_variables(environ)
        chosen = {}
        for scheme in ("http", "https"):
            if scheme in found:
                name, value = found[scheme]
                try:
                    chosen[scheme] = parse_proxy_url(value)
                except ValueError as exc:
                    raise ProxyConfigError("%s is not a usable http://[user:password@]host[:port] proxy URL (%s)"
                                           % (name, exc)) from None
        return cls(chosen.get("http"), chosen.get("https"), found.get("no", ("", ""))[1])

    def bypass(self, host, port):
        """True when NO_PROXY says `host`:`port` is reached directly."""
        if self.bypass_all:
            return True
        host = host.lower().rstrip(".")
        address = _ip_literal(host)
        for name, only_port, entry_address in self.no_proxy:
            if only_port is not None and only_port != port:
                continue
            if address is not None or entry_address is not None:
                if address == entry_address:  # addresses: only the same address
                    return True
            elif host == name or host.endswith("." + name):  # names: whole labels, never a substring
                return True
        return False

    def pick(self, target):
        """The Proxy for a Target, or None to connect directly."""
        proxy = self.by_scheme.get(target.scheme)
        if proxy is None or self.bypass(target.host, target.port):
            return None
        return proxy

    def secrets(self):
        """Every credential string of the proxies, for a node's redaction."""
        return [value for proxy in self.by_scheme.values() if proxy is not None for value in proxy.credentials]


def proxy_for(url, environ):
    """The Proxy `environ` names for `url`, or None (connect directly)."""
    return Proxies.from_environ(environ).pick(split_url(url))


def _authority(host, port, default_port=None):
    """host:port as a request target or Host header writes it: an IPv6
    address in brackets, the port left out when it is `default_port`."""
    shown = "[%s]" % host if ":" in host else host
    return shown if port == default_port else "%s:%d" % (shown, port)


def _tunnel(sock, target, proxy, stop, deadline):
    """CONNECT `target` through the proxy on `sock`; return once it said 2xx.

    Every send and receive waits in wait_ready, so the deadline and a stop
    end it at once, like the rest of the connect.  Only the reply's head is
    consumed (peeked first), never a byte of what the origin sends next.
    A refusal raises ProxyRefused naming the status, never the credentials.
    """
    authority = _authority(target.host, target.port)
    head = "CONNECT %s HTTP/1.1\r\nHost: %s\r\n" % (authority, authority)
    if proxy.authorization is not None:
        head += "Proxy-Authorization: %s\r\n" % proxy.authorization
    pending = memoryview((head + "\r\n").encode("ascii"))  # a non-ASCII host fails here, as in http.client
    while pending:
        wait_ready(stop, [], [sock], deadline, "the proxy's CONNECT")
        try:
            pending = pending[sock.send(pending):]
        except (BlockingIOError, InterruptedError):
            pass
    reply = bytearray()
    while True:
        wait_ready(stop, [sock], [], deadline, "the proxy's CONNECT")
        try:
            peeked = sock.recv(4096, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            continue
        if not peeked:
            raise ConnectionError("the proxy closed the connection before answering CONNECT")
        tail = bytes(reply[-3:])
        end = (tail + peeked).find(b"\r\n\r\n")
        wanted = len(peeked) if end < 0 else end + 4 - len(tail)
        while wanted:  # the peeked bytes are there: this never waits
            got = sock.recv(wanted)
            if not got:
                raise ConnectionError("the proxy closed the connection before answering CONNECT")
            reply += got
            wanted -= len(got)
        if end >= 0:
            break
        if len(reply) > _PROXY_REPLY_MAX_BYTES:
            raise ProxyRefused(None, "a reply head longer than %d bytes" % _PROXY_REPLY_MAX_BYTES, authority)
    status_line = bytes(reply).split(b"\r\n", 1)[0].decode("latin-1")
    version, _, rest = status_line.partition(" ")
    code, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise ProxyRefused(None, "a reply that is not HTTP", authority)
    if not 200 <= int(code) < 300:
        raise ProxyRefused(int(code), reason, authority)


class ProxyRefused(OSError):
    """The proxy did not open the tunnel: `status` is its answer's code (None
    when it did not speak HTTP).  An OSError, like every other way a
    connection fails to be made."""

    def __init__(self, status, reason, authority):
        shown = "".join(c for c in str(reason) if " " <= c <= "~")[:64].strip()
        what = "HTTP %d %s" % (status, shown) if status is not None else shown
        OSError.__init__(self, "the proxy refused CONNECT %s: %s" % (authority, what.strip()))
        self.status = status


def open_socket(target, stop, deadline, ssl_context=None, addresses=None, proxy=None):
    """A connected (and, with `ssl_context`, TLS-wrapped) socket on the ledger.

    One deadline covers the lookup, every address in turn (each gets only what
    is left, so N addresses cannot take N timeouts), a proxy's CONNECT and the
    handshake.  The returned socket is non-blocking; the caller sets its
    timeout.  A stop during any of it, or found once it is done, raises
    StopRequested and no byte of a request goes out.

    `addresses` (getaddrinfo() entries) replaces the lookup for a caller that
    has judged the addresses itself: only those are tried, while the TLS server
    name and the certificate's host stay `target.host`.

    `proxy` (a Proxy) makes the TCP peer the proxy (`addresses` are then the
    proxy's); with `ssl_context` the TLS session runs through a CONNECT tunnel
    to `target`, still verified against `target.host`.  Without `ssl_context`
    the caller sends its request to the proxy in absolute form (HttpExchange
    does).
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
            _tunnel(sock, target, proxy, stop, deadline)
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
                                          do_handshake_on_connect=False)
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


class _ForwardingConnection(http.client.HTTPConnection):
    """An http.client connection to a proxy that forwards plain-HTTP requests:
    the request target is absolute-form (http.client then sends the origin's
    Host), and every request carries the proxy's credentials, if any."""

    proxy_authorization = None

    def putrequest(self, method, url, skip_host=False, skip_accept_encoding=False):
        http.client.HTTPConnection.putrequest(self, method, url, skip_host, skip_accept_encoding)
        if self.proxy_authorization is not None:
            self.putheader("Proxy-Authorization", self.proxy_authorization)


class HttpExchange(object):
    """One request and its response, on a fresh connection a stop can end.

        exchange = HttpExchange(url, stop, timeout_s=25, connect_deadline_s=10)
        exchange.open()          # lookup + connect + TLS; raises before any byte is sent
        exchange.conn.putrequest("GET", exchange.target.request_target)
        ...
        exchange.close()         # always

    `conn` is an http.client connection whose socket is ours: http.client
    drops its own reference once a response exists, we keep `sock` on the
    ledger until close().  `budget`, an outer Deadline, tightens the connect
    deadline and caps the socket timeout; enforcing it while blocked is the
    caller's Watchdog's job.

    `proxies` (a Proxies) opts this exchange into proxies: `proxy` is then the
    one NO_PROXY leaves for this URL, or None.  Through a proxy, an http URL's
    `target.request_target` is absolute-form, so callers send it unchanged.
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
            origin = _authority(self.target.host, self.target.port, default_port=80)
            self.target = self.target._replace(request_target="http://" + origin + self.target.request_target)
        self.sock = None
        self.conn = None

    def open(self):
        deadline = sooner(Deadline(self.connect_deadline_s), self.budget)
        context = self.ssl_context_factory() if self.target.scheme == "https" else None
        self.sock = open_socket(self.target, self.stop, deadline, context, proxy=self.proxy)
        timeout = self.timeout_s
        if self.budget is not None:
            timeout = max(0.05, min(timeout, self.budget.remaining()))
        self.sock.settimeout(timeout)
        if context is not None:
            self.conn = http.client.HTTPSConnection(self.target.host, self.target.port,
                                                    timeout=timeout, context=context)
        elif self.proxy is not None:
            self.conn = _ForwardingConnection(self.target.host, self.target.port, timeout=timeout)
            self.conn.proxy_authorization = self.proxy.authorization
        else:
            self.conn = http.client.HTTPConnection(self.target.host, self.target.port, timeout=timeout)
        self.conn.sock = self.sock
        self.conn.auto_open = 0  # never let http.client open a connection behind our back
        return self

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:
                pass
        if self.sock is not None:
            self.stop.untrack(self.sock)
            try:
                self.sock.close()
            except OSError:
                pass

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc_info):
        self.close()
        return False
