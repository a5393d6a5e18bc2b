"""Shared block `keepalive`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
The `from nodes.blocks...` lines exist only for this standalone copy: inside a
node the blocks share one namespace.
"""
import http.client
import select
import ssl
import threading
import time

from nodes.blocks.transport import HttpExchange, close_quietly, open_socket

# ---- block body ----
# keepalive (builds on transport): KeptExchange, an HttpExchange that takes
# a connection its Keeper kept from an earlier exchange with the same origin
# and gives its own back, and resumes the origin's TLS session on a new one;
# tls_context(), the one context those sessions belong to.
# A node that never reuses a connection embeds none of it.

# A connection idle longer than this is closed, not reused: load balancers drop
# idle connections after about a minute (AWS ALB 60 s, nginx 75 s), and the
# older a kept connection, the likelier a request on it races the server's close.
KEEP_IDLE_MAX_S = 50.0
# Idle connections kept per origin: one per thread that calls the origin at
# once (a claim loop, a heartbeat, a progress outbox); more are closed.
KEEP_PER_ORIGIN = 4

_TLS_CONTEXT = []  # the process's one context, made by its first exchange
_TLS_CONTEXT_LOCK = threading.Lock()  # two threads' first exchanges make one context, not two


def tls_context():
    """The process's TLS context: verified certificates and host names; SSL_CERT_FILE honoured.

    Made at the first exchange (SSL_CERT_FILE is read then), and one for the
    process: a TLS session resumes only under the context that made it.
    """
    with _TLS_CONTEXT_LOCK:
        if not _TLS_CONTEXT:
            _TLS_CONTEXT.append(ssl.create_default_context())
        return _TLS_CONTEXT[0]


def idle_and_open(sock):
    """True when a kept connection can carry a request: nothing to read on it.

    Readable while idle means the server closed it (EOF, a reset) or sent
    bytes nobody asked for: either way the next answer could not be trusted.
    A TLS record that carries no data (a session ticket) leaves it usable.
    The socket is never read otherwise: an idle connection costs no wakeup.
    """
    try:
        if isinstance(sock, ssl.SSLSocket) and sock.pending():
            return False
        ready, _, _ = select.select([sock], [], [], 0)
        if not ready:
            return True
        if not isinstance(sock, ssl.SSLSocket):
            return False
        sock.setblocking(False)
        sock.recv(1)  # data is garbage, b"" the server's close
        return False
    except ssl.SSLWantReadError:
        return True
    except (OSError, ValueError):
        return False


class Keeper(object):
    """Connections kept open between exchanges, and TLS sessions to resume, by origin.

    Holds sockets and TLS sessions only: nothing of a request (a token, a
    signed query string) outlives its exchange, since each exchange builds its
    own http.client connection around the socket.  An idle socket is on no
    stop ledger and nobody reads it, so a wait between polls costs nothing
    and a stop ends that wait as any other.  Thread-safe.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._idle = {}  # (scheme, host, port) -> [(socket, monotonic time it was kept)]
        self._sessions = {}  # (host, port) -> the last SSLSession of a finished handshake

    def take(self, target):
        """An idle connection to `target`'s origin that can carry a request, or None."""
        key = (target.scheme, target.host, target.port)
        while True:
            with self._lock:
                kept = self._idle.get(key)
                if not kept:
                    return None
                sock, since = kept.pop()
            if time.monotonic() - since <= KEEP_IDLE_MAX_S and idle_and_open(sock):
                return sock
            close_quietly(sock)

    def give(self, target, sock):
        """Keep `sock` (its answer read to the end) for the next exchange to the same origin."""
        key = (target.scheme, target.host, target.port)
        with self._lock:
            kept = self._idle.setdefault(key, [])
            if len(kept) < KEEP_PER_ORIGIN:
                kept.append((sock, time.monotonic()))
                return
        close_quietly(sock)

    def tls_session(self, target, context):
        """The last session of `target`'s server made under `context`, or None: a session
        offered to another context is a ValueError, not a handshake."""
        with self._lock:
            made_by, session = self._sessions.get((target.host, target.port), (None, None))
        return session if made_by is context else None

    def remember(self, target, sock):
        """The TLS session of `sock`, for the next handshake with its server to resume."""
        session = getattr(sock, "session", None)
        if session is not None and (session.has_ticket or session.id):
            with self._lock:
                self._sessions[(target.host, target.port)] = (sock.context, session)

    def close(self):
        with self._lock:
            kept = [sock for socks in self._idle.values() for sock, _ in socks]
            self._idle.clear()
        for sock in kept:
            close_quietly(sock)


class KeptExchange(HttpExchange):
    """An HttpExchange that takes a kept connection and keeps its own (`keeper`; None: neither). Direct only.

    open(fresh) takes an idle connection to the origin unless `fresh`
    (`reused` says whether it did), else opens one offering the origin's last
    TLS session; keep(response), once the answer is read to its end, lets
    close() give the connection back.  A request on a reused connection that
    got no answer byte (stale(exc)) raced the server's close: whether it may
    be sent again is the caller's to decide, request by request.
    """

    def __init__(self, url, stop, timeout_s, connect_deadline_s, budget=None, ssl_context_factory=None,
                 keeper=None):
        HttpExchange.__init__(self, url, stop, timeout_s, connect_deadline_s, budget, ssl_context_factory)
        self.keeper = keeper
        self.fresh = self.reused = self.reusable = False

    def open(self, fresh=False):
        self.fresh = fresh
        return HttpExchange.open(self)

    def _connect(self, deadline, context):
        if self.keeper is None:
            return HttpExchange._connect(self, deadline, context)
        if not self.fresh:
            self.stop.check("sending a request")
            sock = self.keeper.take(self.target)
            if sock is not None:
                self.reused = True
                self.stop.track(sock)
                return sock
        session = self.keeper.tls_session(self.target, context) if context is not None else None
        return open_socket(self.target, self.stop, deadline, context, tls_session=session)

    def keep(self, response):
        """Mark the connection reusable: `response` read to its end, HTTP/1.1 both ways, no close asked."""
        self.reusable = (self.keeper is not None and response.isclosed() and not response.will_close
                         and response.version == 11 and not self.was_cut and not self.stop.requested)

    def stale(self, exc, answered=False):
        """True when `exc`, before any answer (`answered` false), says a request on a reused
        connection raced the server's close: the send failed, or no status line began.  Never
        after a cut (a watchdog) or a stop: those are the node's own doing."""
        return (self.reused and not answered and not self.was_cut and not self.stop.requested
                and isinstance(exc, (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                                     ConnectionAbortedError, ssl.SSLEOFError, ssl.SSLZeroReturnError)))

    def _release(self, sock):
        if self.keeper is not None and not self.reused and isinstance(sock, ssl.SSLSocket):
            # Once per handshake, before close (a closed socket has no session), never per exchange:
            # each read of SSLSocket.session leaks a copy of the session on CPython 3.11 and early 3.12
            # (gh-116810), about 19 KiB a probe in the session bench when read after every call.
            self.keeper.remember(self.target, sock)
        if self.reusable and not self.was_cut and not self.stop.requested:
            self.keeper.give(self.target, sock)
        else:
            close_quietly(sock)
