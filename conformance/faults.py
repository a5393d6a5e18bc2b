"""The fault vocabulary every fake server speaks, and the rules that pick a fault.

A *fault* says what goes wrong (``reset after 65536 body bytes``); a *match*
says to which exchanges it happens (``first 1 POST whose key is */result.json``).
The same words appear in code, in reports (``describe()``) and in the contract
documents, so a failing check reads the way its fault was written.

    from conformance import faults
    from conformance.faults import Match
    store.add_fault(faults.reset(after_bytes=65536), Match(method="GET", first=1))

Kinds and their parameters (units are in the names):

    status(code, s3_code=None, message=None, retry_after_s=None, body=None, reason=None,
           endless=False)           endless: the body is followed by silence on an open
                                    connection, its Content-Length promising more: an
                                    error body that never ends
    delay(seconds)                  response (or request body) held back this long
    hang()                          request accepted, never answered
    stall(after_bytes)              body stops after N bytes; connection stays open
    dribble(chunk_bytes, interval_s) status line, headers and body, N bytes per interval
    reset(after_bytes)              RST (SO_LINGER 0) after N body bytes
    truncate(after_bytes)           clean close after N bytes of a longer Content-Length
    redirect(location, code=302)    3xx with Location, empty body
    oversize(extra_bytes, content_length="honest"|"absent")  more body than the object
    garbage(body)                   200 with exactly this body instead of the object
    accept_then_hang()              upload read and committed, never answered
    accept_then_reset()             upload read and committed, then RST
    tls_stall()                     TCP accepted, TLS handshake never completed

*Phase* (a field of Match) says which side of an exchange a fault acts on:
``"request"`` (at the request headers, or at a request-body byte position,
before the body is used) or ``"response"`` (once the request body has been
consumed; an upload is committed first unless the fault refuses it; byte
positions count response body bytes). Each kind has a default, below.

``blackhole()`` gives a loopback address whose TCP connect never completes.
"""

import errno
import fnmatch
import random
import selectors
import socket
import threading

__all__ = [
    "Fault", "Match", "FaultRule", "KINDS", "REFUSING_KINDS", "select_rule",
    "status", "delay", "hang", "stall", "dribble", "reset", "truncate",
    "redirect", "oversize", "garbage", "accept_then_hang", "accept_then_reset",
    "tls_stall", "blackhole", "Blackhole", "close_blackholes",
]

# kind -> (required params, optional params with defaults, phases allowed,
#          default phase). Default phase "body" means: "request" when the
#          request carries a body (POST/PUT/PATCH), else "response".
KINDS = {
    "status": (("code",), {"s3_code": None, "message": None, "retry_after_s": None,
                           "body": None, "reason": None, "endless": False},
               ("request", "response"), "response"),
    "delay": (("seconds",), {}, ("request", "response"), "response"),
    "hang": ((), {}, ("request", "response"), "request"),
    "stall": (("after_bytes",), {}, ("request", "response"), "body"),
    "dribble": (("chunk_bytes", "interval_s"), {}, ("response",), "response"),
    "reset": (("after_bytes",), {}, ("request", "response"), "body"),
    "truncate": (("after_bytes",), {}, ("response",), "response"),
    "redirect": (("location",), {"code": 302}, ("request", "response"), "response"),
    "oversize": (("extra_bytes",), {"content_length": "honest"}, ("response",), "response"),
    "garbage": (("body",), {}, ("request", "response"), "response"),
    "accept_then_hang": ((), {}, ("response",), "response"),
    "accept_then_reset": ((), {}, ("response",), "response"),
    "tls_stall": ((), {}, ("connection",), "connection"),
}

# Faults that replace the server's answer: an upload they hit is read (or not)
# but never committed.
REFUSING_KINDS = frozenset(["status", "redirect", "garbage", "hang"])

# Methods whose requests carry a body; for them "reset"/"stall" count request
# body bytes unless Match(phase="response") says otherwise.
BODY_METHODS = frozenset(["POST", "PUT", "PATCH"])


class Fault(object):
    """One fault: a kind from KINDS and its parameters (read them as attributes).

    Immutable and comparable, so a check can keep a list of the faults it used.
    """

    __slots__ = ("kind", "params")

    def __init__(self, kind, **params):
        if kind not in KINDS:
            raise ValueError("unknown fault kind %r (known: %s)" % (kind, ", ".join(sorted(KINDS))))
        required, optional, _phases, _default = KINDS[kind]
        missing = [name for name in required if name not in params]
        unknown = [name for name in params if name not in required and name not in optional]
        if missing or unknown:
            raise TypeError("fault %r: missing %s, unknown %s" % (kind, missing, unknown))
        values = dict(optional)
        values.update(params)
        _validate(kind, values)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "params", values)

    def __getattr__(self, name):
        try:
            return object.__getattribute__(self, "params")[name]
        except KeyError:
            raise AttributeError(name)

    def __setattr__(self, name, value):
        raise AttributeError("Fault is immutable")

    def __eq__(self, other):
        return isinstance(other, Fault) and (self.kind, self.params) == (other.kind, other.params)

    def __hash__(self):
        return hash((self.kind, tuple(sorted((k, repr(v)) for k, v in self.params.items()))))

    def __repr__(self):
        shown = ", ".join("%s=%r" % (k, v) for k, v in sorted(self.params.items())
                          if v is not None and not (k in KINDS[self.kind][1] and v == KINDS[self.kind][1][k]))
        return "Fault(%r%s)" % (self.kind, ", " + shown if shown else "")

    def default_phase(self, method):
        """The phase this fault acts in when its Match names none."""
        phase = KINDS[self.kind][3]
        if phase == "body":
            return "request" if (method or "").upper() in BODY_METHODS else "response"
        return phase

    def allows_phase(self, phase):
        return phase in KINDS[self.kind][2]

    @property
    def refuses(self):
        """True when the fault answers instead of the server (no commit)."""
        return self.kind in REFUSING_KINDS

    def describe(self, phase=None):
        """Short report text, e.g. 'reset after 65536 body bytes'."""
        p = self.params
        side = {"request": "request ", "response": "response "}.get(phase, "")
        k = self.kind
        if k == "status":
            text = "status %d" % p["code"]
            if p["s3_code"]:
                text += " " + p["s3_code"]
            if p["reason"]:
                text += " (reason %r)" % p["reason"]
            if p["body"] is not None:
                text += " with a %d-byte body" % len(p["body"])
            elif not p["s3_code"]:
                text += " (no body)"
            if p["retry_after_s"] is not None:
                text += ", Retry-After %s s" % _num(p["retry_after_s"])
            if p["endless"]:
                text += ", then silence on an open connection (the body never ends)"
            if phase == "request":
                text += " before reading the request body"
            return text
        if k == "delay":
            where = "reading the request body" if phase == "request" else "response headers"
            return "delay %s s before %s" % (_num(p["seconds"]), where)
        if k == "hang":
            if phase == "response":
                return "hang after reading the request body (never answered)"
            return "hang (request accepted, never answered)"
        if k in ("stall", "reset", "truncate"):
            verb = {"stall": "stall", "reset": "reset", "truncate": "truncate"}[k]
            return "%s after %d %sbody bytes" % (verb, p["after_bytes"], side)
        if k == "dribble":
            return "dribble %d byte%s every %s s" % (
                p["chunk_bytes"], "" if p["chunk_bytes"] == 1 else "s", _num(p["interval_s"]))
        if k == "redirect":
            return "redirect %d to %s" % (p["code"], _mask_query(p["location"]))
        if k == "oversize":
            return "oversize by %d bytes (Content-Length %s)" % (p["extra_bytes"], p["content_length"])
        if k == "garbage":
            return "garbage 200 body (%d bytes)" % len(p["body"])
        if k == "accept_then_hang":
            return "accept then hang (committed, never answered)"
        if k == "accept_then_reset":
            return "accept then reset (committed, then RST)"
        return "tls stall (TCP accepted, handshake never completed)"


def _num(x):
    return ("%g" % x) if isinstance(x, float) else str(x)


def _mask_query(url):
    return url.split("?", 1)[0] + ("?\u2026masked\u2026" if "?" in url else "")


def _nonneg_int(kind, name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("fault %r: %s must be an int >= 0, got %r" % (kind, name, value))


def _validate(kind, v):
    for name in ("after_bytes", "extra_bytes"):
        if name in v:
            _nonneg_int(kind, name, v[name])
    if kind == "status":
        if isinstance(v["code"], bool) or not isinstance(v["code"], int) or not 100 <= v["code"] <= 999:
            raise ValueError("fault 'status': code must be an int in 100..999")
        if v["body"] is not None and not isinstance(v["body"], (bytes, bytearray)):
            raise ValueError("fault 'status': body must be bytes")
        if not isinstance(v["endless"], bool):
            raise ValueError("fault 'status': endless must be True or False")
    if kind == "delay" and (not isinstance(v["seconds"], (int, float)) or v["seconds"] < 0):
        raise ValueError("fault 'delay': seconds must be >= 0")
    if kind == "dribble":
        if isinstance(v["chunk_bytes"], bool) or not isinstance(v["chunk_bytes"], int) or v["chunk_bytes"] < 1:
            raise ValueError("fault 'dribble': chunk_bytes must be an int >= 1")
        if not isinstance(v["interval_s"], (int, float)) or v["interval_s"] < 0:
            raise ValueError("fault 'dribble': interval_s must be >= 0")
    if kind == "redirect" and not 300 <= v["code"] <= 399:
        raise ValueError("fault 'redirect': code must be 3xx")
    if kind == "oversize" and v["content_length"] not in ("honest", "absent"):
        raise ValueError("fault 'oversize': content_length must be 'honest' or 'absent'")
    if kind == "garbage" and not isinstance(v["body"], (bytes, bytearray)):
        raise ValueError("fault 'garbage': body must be bytes")


# ---- constructors: faults.reset(65536) reads better than Fault("reset", ...) ----

def status(code, s3_code=None, message=None, retry_after_s=None, body=None, reason=None, endless=False):
    return Fault("status", code=code, s3_code=s3_code, message=message,
                 retry_after_s=retry_after_s, body=body, reason=reason, endless=endless)


def delay(seconds):
    return Fault("delay", seconds=seconds)


def hang():
    return Fault("hang")


def stall(after_bytes):
    return Fault("stall", after_bytes=after_bytes)


def dribble(chunk_bytes, interval_s):
    return Fault("dribble", chunk_bytes=chunk_bytes, interval_s=interval_s)


def reset(after_bytes):
    return Fault("reset", after_bytes=after_bytes)


def truncate(after_bytes):
    return Fault("truncate", after_bytes=after_bytes)


def redirect(location, code=302):
    return Fault("redirect", location=location, code=code)


def oversize(extra_bytes, content_length="honest"):
    return Fault("oversize", extra_bytes=extra_bytes, content_length=content_length)


def garbage(body):
    return Fault("garbage", body=body)


def accept_then_hang():
    return Fault("accept_then_hang")


def accept_then_reset():
    return Fault("accept_then_reset")


def tls_stall():
    return Fault("tls_stall")


class Match(object):
    """Which exchanges a fault applies to. Every criterion given must hold.

    method      "GET", "POST", ... (case-insensitive) or None for any.
    key         fnmatch glob (case-sensitive; ``*`` also crosses ``/``) on the
                object key (the store) or the request path (other routes);
                None for any. For an upload the key is known only once its
                ``key`` form field is read, so such a rule is considered then.
    not_key     a glob or a list of globs: keys matching any of them are not
                matched (``key="prefix/*", not_key=["*/result.json"]``: every
                object under the prefix but the report).
    phase       "request" or "response" (see the module docstring); None for
                the kind's default.
    skip        let this many matching exchanges through first.
    first       apply at most this many times (None: every time).
    probability apply with this chance, drawn from a random.Random seeded by
                ``seed`` (or by the server's seed and the rule's position).
    For ``tls_stall`` only skip/first/probability count, per connection.
    """

    __slots__ = ("method", "key", "not_key", "phase", "skip", "first", "probability", "seed")

    def __init__(self, method=None, key=None, phase=None, first=None, probability=None,
                 skip=0, seed=None, not_key=None):
        if phase not in (None, "request", "response"):
            raise ValueError("Match.phase must be None, 'request' or 'response'")
        if first is not None and (isinstance(first, bool) or not isinstance(first, int) or first < 0):
            raise ValueError("Match.first must be an int >= 0")
        if isinstance(skip, bool) or not isinstance(skip, int) or skip < 0:
            raise ValueError("Match.skip must be an int >= 0")
        if probability is not None and not 0.0 <= probability <= 1.0:
            raise ValueError("Match.probability must be within [0, 1]")
        self.method = method.upper() if method else None
        self.key = key
        self.not_key = (not_key,) if isinstance(not_key, str) else tuple(not_key or ())
        self.phase = phase
        self.skip = skip
        self.first = first
        self.probability = probability
        self.seed = seed

    def __repr__(self):
        shown = ["%s=%r" % (n, getattr(self, n)) for n in self.__slots__
                 if getattr(self, n) not in (None, 0, ()) or (n == "first" and self.first == 0)]
        return "Match(%s)" % ", ".join(shown)

    def needs_key(self):
        return self.key is not None or bool(self.not_key)

    def matches(self, method, key):
        """Method and key criteria only (counters live in the FaultRule)."""
        if self.method is not None and (method or "").upper() != self.method:
            return False
        if self.key is not None:
            if key is None or not fnmatch.fnmatchcase(key, self.key):
                return False
        if self.not_key:
            if key is None or any(fnmatch.fnmatchcase(key, glob) for glob in self.not_key):
                return False
        return True

    def describe(self):
        parts = []
        if self.first is not None:
            parts.append("first %d" % self.first)
        if self.skip:
            parts.append("after skipping %d" % self.skip)
        parts.append(self.method or "any method")
        if self.key is not None:
            parts.append("key %s" % self.key)
        if self.not_key:
            parts.append("except %s" % ", ".join(self.not_key))
        if self.probability is not None:
            parts.append("with probability %g" % self.probability)
        return " ".join(parts)


class FaultRule(object):
    """A fault installed on a server: its match, its counters, its release.

    Returned by ``add_fault``. ``seen`` counts exchanges that matched method
    and key, ``applied`` those the fault was applied to. ``release()`` ends
    what the rule is holding (hang, stall, accept_then_hang): with
    ``answer=False`` the held connections are closed; with ``answer=True`` the
    held exchanges carry on as if unfaulted.
    """

    def __init__(self, fault, match, index, server_seed, on_remove=None):
        if match is None:
            match = Match()
        phase = match.phase
        if phase is not None and not fault.allows_phase(phase):
            raise ValueError("fault %r cannot act in phase %r" % (fault.kind, phase))
        self.fault = fault
        self.match = match
        self.index = index
        self.seen = 0
        self.applied = 0
        seed = match.seed if match.seed is not None else "%s/%d" % (server_seed, index)
        self._rng = random.Random(seed)
        self._released = threading.Event()
        self.release_answer = False
        self._on_remove = on_remove
        self.removed = False

    @property
    def connection_level(self):
        return self.fault.kind == "tls_stall"

    def phase_for(self, method):
        return self.match.phase or self.fault.default_phase(method)

    def consider(self, method, key):
        """Count one candidate exchange; True when the fault applies to it.

        The caller holds the server's lock, so counters and the random draw
        happen in a reproducible order for a given request order.
        """
        if self.removed or not self.match.matches(method, key):
            return False
        self.seen += 1
        if self.seen <= self.match.skip:
            return False
        if self.match.first is not None and self.applied >= self.match.first:
            return False
        if self.match.probability is not None and self._rng.random() >= self.match.probability:
            return False
        self.applied += 1
        return True

    @property
    def released(self):
        return self._released.is_set()

    def hold(self, timeout=None):
        """Block until release() (or the server's close(), which wakes every rule).

        Returns True when the held exchange should carry on unfaulted.
        """
        self._released.wait(timeout)
        return self.release_answer

    def release(self, answer=False):
        """End every hold of this rule, now and later (release is permanent)."""
        self.release_answer = bool(answer)
        self._released.set()

    def wake(self):
        """Used by the server's close(): end every hold without an answer."""
        self.release_answer = False
        self._released.set()

    def remove(self):
        self.removed = True
        if self._on_remove is not None:
            self._on_remove(self)

    def describe(self, method=None):
        phase = self.match.phase or self.fault.default_phase(method)
        return "%s (%s)" % (self.fault.describe(phase if phase in ("request", "response") else None),
                            self.match.describe())


def select_rule(rules, method, key, which="all"):
    """First rule that applies to a request, or None.

    ``which`` is "all" when the key is known at the request headers (a GET);
    for an upload the server asks twice: "keyless" at the headers (rules
    without a key glob), then "keyed" once the ``key`` form field is read.
    Connection-level rules are never chosen here.
    """
    for rule in rules:
        if rule.connection_level:
            continue
        if which == "keyless" and rule.match.needs_key():
            continue
        if which == "keyed" and not rule.match.needs_key():
            continue
        if rule.consider(method, key):
            return rule
    return None


def select_connection_rule(rules):
    """First connection-level rule (tls_stall) that applies to a new connection."""
    for rule in rules:
        if rule.connection_level and rule.consider(None, None):
            return rule
    return None


# ---- blackhole: a loopback address whose TCP connect never completes ----

# How long a filler connect may take to complete before we conclude the
# backlog is full. Loopback handshakes complete in well under a millisecond.
BLACKHOLE_PROBE_S = 0.05
# Give up if this many fillers did not fill the accept queue (kernel changed).
BLACKHOLE_MAX_FILLERS = 64

_open_blackholes = []
_open_lock = threading.Lock()


class Blackhole(tuple):
    """(host, port) of a listener whose accept queue is full: connects hang.

    Measured on Linux 6.x: ``listen(0)`` still accepts one connection into the
    queue; once that slot holds an unaccepted connection, further SYNs are
    dropped, the client retransmits (1, 3, 7, 15 s ...) and connect() blocks
    until its own timeout (a 20 s client timeout expired with no answer).
    The sockets stay open until close() (or close_blackholes()), because a
    dropped Blackhole would otherwise turn into a refused port.
    """

    def __new__(cls, host, port, listener, fillers):
        self = tuple.__new__(cls, (host, port))
        self.listener = listener
        self.fillers = fillers
        return self

    @property
    def host(self):
        return self[0]

    @property
    def port(self):
        return self[1]

    def url(self, scheme="http", path="/"):
        return "%s://%s:%d%s" % (scheme, self[0], self[1], path)

    def close(self):
        for s in self.fillers + [self.listener]:
            try:
                s.close()
            except OSError:
                pass
        self.fillers = []
        with _open_lock:
            _open_blackholes[:] = [h for h in _open_blackholes if h is not self]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def blackhole():
    """A loopback (host, port) to which a TCP connect hangs; see Blackhole."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    fillers = []
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        addr = listener.getsockname()
        for _ in range(BLACKHOLE_MAX_FILLERS):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            err = s.connect_ex(addr)
            if err in (0, errno.EISCONN):
                fillers.append(s)
                continue
            if err not in (errno.EINPROGRESS, errno.EAGAIN, errno.EWOULDBLOCK):
                s.close()
                raise OSError(err, "blackhole: filler connect failed")
            with selectors.DefaultSelector() as sel:
                sel.register(s, selectors.EVENT_WRITE)
                completed = bool(sel.select(BLACKHOLE_PROBE_S))
            if completed:
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    s.close()
                    raise OSError(err, "blackhole: filler connect failed")
                fillers.append(s)
                continue
            # This connect did not complete: the queue is full and SYNs are dropped.
            s.close()
            hole = Blackhole("127.0.0.1", addr[1], listener, fillers)
            with _open_lock:
                _open_blackholes.append(hole)
            return hole
        raise RuntimeError("blackhole: accept queue never filled after %d connections"
                           % BLACKHOLE_MAX_FILLERS)
    except BaseException:
        for s in fillers:
            s.close()
        listener.close()
        raise


def close_blackholes():
    """Close every blackhole still open (for harness teardown)."""
    with _open_lock:
        holes = list(_open_blackholes)
    for hole in holes:
        hole.close()
