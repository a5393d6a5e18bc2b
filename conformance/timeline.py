"""One timeline of every request the fakes of a plane received, across fakes.

A long-lived node (a worker that polls, heartbeats and holds leases until it
is stopped) is judged over time: how often it polled, what it did before,
during and after a signal, what its second life did after a crash. The
timeline gives a check that history without a second record: it is read,
whenever a check asks, from the transcripts the fakes' LoopbackServers
already keep (one Exchange per request, with monotonic times), so it is live
and costs nothing while nobody looks.

    timeline = Timeline([plane_server, store])          # or {"plane": server, ...}
    timeline.wait_for(3, SHORT_TIMEOUT_S, fake="plane", path="/poll")
    polls = timeline.requests(fake="plane", method="GET", path="/poll", since=life.t_start)
    gaps = timeline.intervals(fake="plane", path="/poll")     # arrival to arrival, in seconds
    late = timeline.requests(since=result.t_signal)            # what came after SIGTERM
    timeline.mark("SIGTERM")                                   # shown in render()
    ctx.note(timeline.render())

Filters, the same for every query: ``fake`` (a fake's name, or a list of
names), ``method``, ``path`` (an fnmatch glob on the path without its query;
``*`` also crosses ``/``), ``status`` (a code, or a list), ``since`` and
``until`` (monotonic seconds: arrival at or after ``since`` and before
``until``), and ``where`` (any predicate on the Entry). Times are
``time.monotonic()`` seconds, the clock of the runner's RunResult (t_start,
t_signal, t_exit) and of the stdout lines it captures, so requests, signals,
exits and output compare directly.

A request still being answered (held by a fault, or a long upload) has
``t_end`` and ``status`` None until it ends.
"""

import collections
import fnmatch
import threading
import time

from conformance.timeouts import POLL_INTERVAL_S, Deadline

Entry = collections.namedtuple("Entry", "fake seq method path status t_start t_end outcome exchange")
Entry.__doc__ = """One request a fake received: the fake's name, its sequence number on that
fake, method, path (without the query; a query shows only as masked in the
exchange), status sent (None while unanswered, or when none was), arrival
and end (time.monotonic()), outcome ("ok", "held", "client-gone", ...; see
servers.Exchange) and the live servers.Exchange itself (headers, notes)."""

Mark = collections.namedtuple("Mark", "t label")


def _as_set(value):
    if value is None:
        return None
    if isinstance(value, (str, int)):
        return {value}
    return set(value)


class Timeline:
    """Every request received by a set of fakes, in arrival order.

    ``servers`` is a list of LoopbackServer-like objects (anything with
    ``name`` and ``transcript``), or a dict {name: server} to name them
    otherwise. A fake can be added later with `add`.
    """

    def __init__(self, servers=()):
        self._lock = threading.Lock()
        self._servers = []      # [(name, server)]
        self._marks = []
        if isinstance(servers, dict):
            for name, server in servers.items():
                self.add(server, name)
        else:
            for server in servers:
                self.add(server)

    def add(self, server, name=None):
        """Include one more fake (named `name`, default its own name); returns it."""
        with self._lock:
            self._servers.append((name or server.name, server))
        return server

    @property
    def fakes(self):
        """The fakes' names, in the order they were added."""
        with self._lock:
            return [name for name, _server in self._servers]

    # ---- queries ---------------------------------------------------------
    def entries(self):
        """Every request so far, every fake, sorted by arrival (then fake order, then sequence)."""
        with self._lock:
            servers = list(self._servers)
        found = []
        for order, (name, server) in enumerate(servers):
            for ex in server.transcript:
                found.append((ex.t_start, order, ex.seq, Entry(name, ex.seq, ex.method, ex.path.split("?", 1)[0],
                                                               ex.status, ex.t_start, ex.t_end, ex.outcome, ex)))
        found.sort(key=lambda item: item[:3])
        return [item[3] for item in found]

    def requests(self, fake=None, method=None, path=None, status=None, since=None, until=None, where=None):
        """The requests that pass every filter given (see the module docstring), by arrival."""
        fakes, methods, statuses = _as_set(fake), _as_set(method), _as_set(status)
        if methods is not None:
            methods = set(m.upper() for m in methods)
        chosen = []
        for entry in self.entries():
            if fakes is not None and entry.fake not in fakes:
                continue
            if methods is not None and entry.method.upper() not in methods:
                continue
            if path is not None and not fnmatch.fnmatchcase(entry.path, path):
                continue
            if statuses is not None and entry.status not in statuses:
                continue
            if since is not None and entry.t_start < since:
                continue
            if until is not None and entry.t_start >= until:
                continue
            if where is not None and not where(entry):
                continue
            chosen.append(entry)
        return chosen

    def count(self, **filters):
        return len(self.requests(**filters))

    def first(self, **filters):
        """The earliest matching request, or None."""
        found = self.requests(**filters)
        return found[0] if found else None

    def last(self, **filters):
        """The latest matching request, or None."""
        found = self.requests(**filters)
        return found[-1] if found else None

    def intervals(self, **filters):
        """Seconds between the arrivals of successive matching requests
        (n requests give n - 1 intervals)."""
        times = [entry.t_start for entry in self.requests(**filters)]
        return [later - earlier for earlier, later in zip(times, times[1:])]

    def wait_for(self, count, timeout, **filters):
        """Wait until at least `count` requests match the filters; True when
        they did within `timeout` seconds. Woken by the fake's own events when
        the filters name exactly one fake, else re-checked every POLL_INTERVAL_S."""
        deadline = Deadline(timeout)
        wanted = _as_set(filters.get("fake"))
        with self._lock:
            servers = [server for name, server in self._servers if wanted is None or name in wanted]
        condition = lambda: self.count(**filters) >= count
        if len(servers) == 1 and hasattr(servers[0], "wait_until"):
            return servers[0].wait_until(condition, deadline.left())
        while True:
            if condition():
                return True
            if deadline.over():
                return False
            time.sleep(POLL_INTERVAL_S)

    # ---- marks and rendering ---------------------------------------------
    def mark(self, label, t=None):
        """Note a moment that is not a request (a signal, a kill, a restart), shown by render()."""
        with self._lock:
            self._marks.append(Mark(time.monotonic() if t is None else t, str(label)))

    @property
    def marks(self):
        with self._lock:
            return sorted(self._marks)

    def render(self, t0=None, limit=200):
        """The timeline as text, one line per request or mark, times in seconds
        since t0 (default: the first request or mark). At most `limit` lines:
        the first and the last halves when longer."""
        rows = [(entry.t_start, 1, self._describe(entry)) for entry in self.entries()]
        rows += [(mark.t, 0, "-- %s" % mark.label) for mark in self.marks]
        rows.sort(key=lambda row: row[:2])
        if not rows:
            return "timeline: no request"
        origin = rows[0][0] if t0 is None else t0
        lines = ["%+9.3f  %s" % (t - origin, text) for t, _kind, text in rows]
        if len(lines) > limit:
            half = limit // 2
            lines = lines[:half] + ["   ... %d lines ..." % (len(lines) - 2 * half)] + lines[-half:]
        return "timeline (%d requests; seconds since %s):\n%s" % (
            len(rows) - len(self.marks), "t0" if t0 is not None else "the first entry", "\n".join(lines))

    @staticmethod
    def _describe(entry):
        if entry.t_end is None:
            took = "unanswered"
        else:
            took = "%d ms" % round((entry.t_end - entry.t_start) * 1000)
        status = entry.status if entry.status is not None else "-"
        outcome = "" if entry.outcome in (None, "ok") else " " + entry.outcome
        return "%s %s %s -> %s (%s%s)" % (entry.fake, entry.method, entry.path, status, took, outcome)
