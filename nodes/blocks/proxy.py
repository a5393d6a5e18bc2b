"""Shared block `proxy`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
The `from nodes.blocks...` line exists only for this standalone copy: inside a
node the blocks share one namespace.  Embedded only by nodes that must honour
an egress proxy (the step node); the transport block calls a Proxy's methods
and names nothing defined here.
"""
import base64
import collections
import http.client
import re
import socket
import urllib.parse

from nodes.blocks.transport import _FORBIDDEN_IN_TARGET, host_and_port, wait_ready

# ---- block body ----
# proxy: the proxies an environment names, and the CONNECT tunnel and
# absolute-form forwarding the transport block uses through a Proxy's methods
# (tunnel, forward_target, forwarding_connection) when a node hands it one.
# Proxy credentials never appear in a message.
#
# The variables are read as urllib reads them (the upstream's ProxyHandler):
# a lowercase name wins over its uppercase form, an empty lowercase one turns
# the proxy off, and HTTP_PROXY is ignored when REQUEST_METHOD is set (a CGI
# script gets a client's "Proxy:" header as HTTP_PROXY, CVE-2016-1000110).
# NO_PROXY is matched as curl matches it: by whole domain labels, never by
# substring, and an address only by itself.

_PROXY_REPLY_MAX_BYTES = 65536  # a CONNECT reply's status line and headers; more is not a proxy talking
# The blank line that ends a reply's head: CRLF or a bare LF per line, as http.client reads it.
_PROXY_REPLY_END_RE = re.compile(b"\n\r?\n")


class Proxy(collections.namedtuple("Proxy", "host port authorization credentials")):
    """A proxy: where it is, the Proxy-Authorization value to send (None
    without credentials) and the credential strings a log must never show.
    Its repr() shows neither."""

    __slots__ = ()

    def __repr__(self):
        return "Proxy(host=%r, port=%r%s)" % (self.host, self.port,
                                              ", with credentials" if self.authorization else "")

    # The three hooks the transport block calls on the proxy it is given: it
    # names nothing of this block, so a node that never uses a proxy leaves
    # this block out and carries no proxy code.

    def tunnel(self, sock, target, stop, deadline):
        """open_socket(), for an https target: CONNECT through this proxy (_tunnel)."""
        _tunnel(sock, target, self, stop, deadline)

    def forward_target(self, target):
        """HttpExchange, for an http target: the absolute-form request target
        a forwarding proxy needs (the port left out when it is 80)."""
        origin = _authority(target.host, target.port, default_port=80)
        return target._replace(request_target="http://" + origin + target.request_target)

    def forwarding_connection(self, target, timeout):
        """HttpExchange, for an http target: an http.client connection to
        this proxy that sends its credentials with every request."""
        conn = _ForwardingConnection(target.host, target.port, timeout=timeout)
        conn.proxy_authorization = self.authorization
        return conn


class ProxyConfigError(ValueError):
    """A proxy variable that cannot be used; the message names it, never its value."""


def parse_proxy_url(url):
    """The Proxy of `[http://][user:password@]host[:port][/...]` (port 80 by default).

    As urllib reads a proxy variable: a value without a scheme is the
    proxy's authority (`proxy.corp:3128`, `user:pw@proxy:3128`), and what
    follows the authority (a path, `/` or more) is ignored.  A scheme other
    than http is refused: urllib sent its CONNECT, credentials included, in
    the clear to whatever listened there (a TLS or SOCKS port).  ValueError
    never quotes the URL, which may carry a password.  User and password are
    percent-decoded, as urllib does, before they go into the Basic credentials.
    """
    if not isinstance(url, str) or not url:
        raise ValueError("not a non-empty string")
    scheme, colon, rest = url.partition(":")
    if not (colon and scheme and "/" not in scheme and rest.startswith("/")):
        # urllib's reading: no `scheme:/`, so the value is [user:password@]host[:port] (or //host...)
        url = ("http:" if url.startswith("//") else "http://") + url
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() != "http":
        raise ValueError("only http:// proxies are supported")
    if _FORBIDDEN_IN_TARGET.intersection(parts.netloc):
        raise ValueError("whitespace or control characters in the proxy URL")
    host, port = host_and_port(parts)
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
        tail = bytes(reply[-2:])
        end = _PROXY_REPLY_END_RE.search(tail + peeked)
        wanted = len(peeked) if end is None else end.end() - len(tail)
        while wanted:  # the peeked bytes are there: this never waits
            got = sock.recv(wanted)
            if not got:
                raise ConnectionError("the proxy closed the connection before answering CONNECT")
            reply += got
            wanted -= len(got)
        if end is not None:
            break
        if len(reply) > _PROXY_REPLY_MAX_BYTES:
            raise ProxyRefused(None, "a reply head longer than %d bytes" % _PROXY_REPLY_MAX_BYTES, authority)
    # The status line as http.client reads it: words split on any whitespace, any HTTP/ version
    version, code, reason = (bytes(reply).split(b"\n", 1)[0].decode("latin-1").split(None, 2) + ["", ""])[:3]
    if not version.startswith("HTTP/") or len(code) != 3 or not code.isdigit():
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


class _ForwardingConnection(http.client.HTTPConnection):
    """An http.client connection to a proxy that forwards plain-HTTP requests:
    the request target is absolute-form (http.client then sends the origin's
    Host), and every request carries the proxy's credentials, if any."""

    proxy_authorization = None

    def putrequest(self, method, url, skip_host=False, skip_accept_encoding=False):
        http.client.HTTPConnection.putrequest(self, method, url, skip_host, skip_accept_encoding)
        if self.proxy_authorization is not None:
            self.putheader("Proxy-Authorization", self.proxy_authorization)
