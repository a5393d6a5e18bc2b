"""The fake scan server's reservations: each one's record, and the book that queues, grants and resolves them.

    book = Reservations(lock)                            # the server's: server.add_reservation() is book.add()
    res = book.add(targets, 1 << 20, 30, 120.0)          # queued: the next new request id gets it
    res, replayed = book.claim(request_id)               # a claim's: its own again, or the next queued, or None
    book.resolve(res, "expired")                         # a check decides (server.resolve, plane.resolve)

A Reservation is one reservation as the server sees it: its identity and targets, the assignment
built at the grant (so its instants start then), its status document, what resolved it and every
mutation it received. The book is the model's state behind the routes: the queue a new request id
takes from, every reservation by id and by request id, the request ids answered with no work, and
the capability the next grant's assignment names (the last claiming worker's first). The routes
call it under the server's lock, which the book shares.
"""

import collections
import hashlib
import secrets as _secrets
import time

from conformance.planes.scan.protocol import KEEP, Refused, deep_patch, instant

__all__ = ["Reservation", "Reservations", "DEFAULT_CAPABILITY", "STATE_SCANNING", "STATE_OF"]

# The (source, platform, planning_kind) of an assignment granted before any claim named a capability:
# the reference node's.
DEFAULT_CAPABILITY = ("fixture", "local", "files")
# What the status's `state` says while a reservation is held, and after each resolution.
STATE_SCANNING = "scanning"
STATE_OF = {"bundle_accepted": "completed", "prebundle_report": "reported", "expired": "expired"}


class Reservation(object):
    """One reservation: its identity, its targets, its assignment (built at the grant), what the
    server decided and every mutation it received.

    reservation_id, bundle_id, scan_event_id, execution_snapshot_sha256, source, platform,
    planning_kind, targets (the pins, in order), declared_bundle_bytes, target_scan_timeout_s,
    assignment_deadline_in_s (from the grant), attempts; doc (the assignment as served, None
    until granted), granted_at (wall), expires_at (wall: the assignment deadline), request_ids
    (every request id it was granted to: one), state, resolution, receipt_id, payload_sha256,
    failure_code, resolved_by ("bundle", "terminal", "check"), overrides (status members served
    instead of the model's), status_error ((status, code) answered to status reads), touched
    (a check changed the server's mind about it: resolve, set_status), puts and terminals (the
    ScanCalls of every upload and report), bundle_path (the accepted bundle's bytes on disk),
    bundle_files ({sha256: path} of every whole upload whose digest header held), terminal_body
    (the accepted report's bytes)."""

    def __init__(self, reservation_id, targets, declared_bundle_bytes, target_scan_timeout_s,
                 assignment_deadline_in_s, patch=None, source=None, platform=None, planning_kind=None,
                 attempts=0):
        self.reservation_id = reservation_id
        self.bundle_id = _secrets.token_hex(16)
        self.scan_event_id = _secrets.token_hex(16)
        self.execution_snapshot_sha256 = _secrets.token_hex(32)
        # None: at the grant, the claiming worker's first capability (as a server dispatches by capability:
        # a node whose [EDIT] CAPABILITIES differ is served work it can run), else DEFAULT_CAPABILITY
        self.source, self.platform, self.planning_kind, self.attempts = source, platform, planning_kind, attempts
        self.targets = [dict(t) for t in targets]
        self.declared_bundle_bytes = declared_bundle_bytes
        self.target_scan_timeout_s = target_scan_timeout_s
        self.assignment_deadline_in_s = assignment_deadline_in_s
        self.patch = patch
        self.doc = None
        self.granted_at = self.expires_at = None
        self.request_ids = []
        self.state = STATE_SCANNING
        self.resolution = self.receipt_id = self.payload_sha256 = self.failure_code = None
        self.resolved_by = None
        self.overrides = {}
        self.status_error = None
        self.touched = False
        self.puts, self.terminals = [], []
        self.bundle_path = None
        self.bundle_files = {}
        self.terminal_body = None

    def __repr__(self):
        return "Reservation(%d, %s, requests=%r)" % (self.reservation_id, self.resolution or self.state,
                                                    self.request_ids)

    def __int__(self):
        return self.reservation_id

    @property
    def identity(self):
        """What a bundle header and a resolution must repeat (SCAN-BUNDLE-2, SCAN-RECONCILE-2)."""
        return {"reservation_id": self.reservation_id, "bundle_id": self.bundle_id,
                "scan_event_id": self.scan_event_id, "execution_snapshot_sha256": self.execution_snapshot_sha256}

    def build(self, now):
        """The assignment (SCAN-ASSIGN-1) as of a grant at wall time now, with the patch applied."""
        deadline = now + self.assignment_deadline_in_s
        source, platform, planning_kind = (given if given is not None else default for given, default in zip(
            (self.source, self.platform, self.planning_kind), DEFAULT_CAPABILITY))
        reservation = {"reservation_id": self.reservation_id, "bundle_id": self.bundle_id,
                       "scan_event_id": self.scan_event_id, "source": source, "platform": platform,
                       "attempts": self.attempts, "remote_issued_at": instant(now),
                       "remote_expires_at": instant(deadline), "declared_bundle_bytes": self.declared_bundle_bytes}
        doc = {"reservation": reservation,
               "deadlines": {"assignment_deadline_at": instant(deadline),
                             "target_scan_timeout_seconds": self.target_scan_timeout_s},
               "execution_snapshot_sha256": self.execution_snapshot_sha256,
               "planning_kind": planning_kind,
               "targets": [dict(t) for t in self.targets]}
        return deep_patch(doc, self.patch), deadline

    def status_doc(self):
        """The flat status document (and receipt): the model's members, then the overrides."""
        doc = {"reservation_id": self.reservation_id, "bundle_id": self.bundle_id,
               "scan_event_id": self.scan_event_id, "state": self.state,
               "expires_at": instant(self.expires_at) if self.expires_at is not None else None,
               "resolution": self.resolution, "receipt_id": self.receipt_id,
               "payload_sha256": self.payload_sha256, "failure_code": self.failure_code}
        return deep_patch(doc, self.overrides) if self.overrides else doc

    def settle(self, resolution, by, payload_sha256=None, failure_code=None, state=None):
        self.resolution, self.resolved_by = resolution, by
        self.payload_sha256, self.failure_code = payload_sha256, failure_code
        self.state = state or STATE_OF.get(resolution, self.state)
        self.receipt_id = hashlib.sha256(("receipt:%d:%s:%s:%s" % (
            self.reservation_id, resolution, payload_sha256 or "", failure_code or "")).encode("ascii")).hexdigest()


class Reservations(object):
    """The book of one server's reservations (see the module docstring). Every method takes
    lock, the server's RLock: the routes hold it already while they call the book."""

    def __init__(self, lock, first_reservation_id=1):
        self._lock = lock
        self._next_id = first_reservation_id
        self._queue = collections.deque()
        self._by_id = collections.OrderedDict()   # reservation id -> Reservation
        self._by_request = {}                     # request id -> Reservation
        self._no_work = []                        # request ids answered 204
        self.capability = DEFAULT_CAPABILITY      # the last claiming worker's first capability

    # ---------------------------------------------------------------- arranging
    def add(self, targets, declared_bundle_bytes, target_scan_timeout_s, assignment_deadline_in_s, patch=None,
            queued=True, **identity):
        """A new reservation (ids increasing), queued for the next new request id unless queued
        is False (grant() binds it then). identity: source, platform, planning_kind, attempts."""
        with self._lock:
            res = Reservation(self._next_id, targets, declared_bundle_bytes, target_scan_timeout_s,
                              assignment_deadline_in_s, patch, **identity)
            self._next_id += 1
            self._by_id[res.reservation_id] = res
            if queued:
                self._queue.append(res)
            return res

    def grant(self, reservation, request_id=None):
        """Bind a reservation to request_id (default a fresh one) as a claim would, without one,
        and return (request id, assignment): a check plants a slot state that holds it."""
        res = self.get(reservation)
        with self._lock:
            if res in self._queue:
                self._queue.remove(res)
            request_id = request_id or _secrets.token_hex(16)
            self._bind(res, request_id)
            return request_id, res.doc

    def claim(self, request_id):
        """(Reservation, replayed) for a claim's request id: the one it was granted before
        (replayed), else the next queued one, granted to it now; (None, False) when the queue is
        empty (the request id is recorded as answered with no work)."""
        with self._lock:
            res = self._by_request.get(request_id)
            if res is not None:
                return res, True
            if self._queue:
                res = self._queue.popleft()
                self._bind(res, request_id)
                return res, False
            self._no_work.append(request_id)
            return None, False

    def _bind(self, res, request_id):
        if res.doc is None:
            for name, value in zip(("source", "platform", "planning_kind"), self.capability):
                if getattr(res, name) is None:
                    setattr(res, name, value)
            now = time.time()
            res.doc, res.expires_at = res.build(now)
            res.granted_at = now
        if request_id not in res.request_ids:
            res.request_ids.append(request_id)
        self._by_request[request_id] = res

    def resolve(self, reservation, resolution="expired", payload_sha256=None, failure_code=None, state=None):
        """The server resolves a reservation on its own (racing the worker): the next status
        read, claim replay, upload or report sees it. resolution None makes it unresolved again.
        Returns the status document."""
        res = self.get(reservation)
        with self._lock:
            res.touched = True
            if resolution is None:
                res.resolution = res.receipt_id = res.payload_sha256 = res.failure_code = res.resolved_by = None
                res.state = state or STATE_SCANNING
            else:
                res.settle(resolution, "check", payload_sha256, failure_code, state)
        return res.status_doc()

    def set_status(self, reservation, state=KEEP, resolution=KEEP, status_error=KEEP, clear_overrides=False,
                   **members):
        """What the server says of a reservation from now on. state: the status's state;
        resolution: as resolve() (payload_sha256 and failure_code among members then count);
        status_error: (status, code) answered to every status read (404, 409, 410...), None to
        clear; members: status members served instead of the model's (bundle_id="ff" * 16 for a
        resolution of another bundle, expires_at="..." for a deadline in the past; DELETE leaves
        one out); clear_overrides: forget the members given before. Returns the status document."""
        res = self.get(reservation)
        with self._lock:
            res.touched = True
            if resolution is not KEEP:
                self.resolve(res, resolution, members.pop("payload_sha256", None), members.pop("failure_code", None))
            if state is not KEEP:
                res.state = state
            if status_error is not KEEP:
                res.status_error = status_error
            if clear_overrides:
                res.overrides = {}
            res.overrides.update(members)
        return res.status_doc()

    # ---------------------------------------------------------------- reading
    def get(self, reservation):
        """The Reservation of an id (or the Reservation itself); KeyError when there is none."""
        with self._lock:
            return self._by_id[int(reservation)]

    def granted_one(self, reservation_id):
        """The Reservation of an id once granted, else None (a path naming it is answered 404)."""
        with self._lock:
            res = self._by_id.get(reservation_id)
            return res if res is not None and res.doc is not None else None

    def held(self, call):
        """The granted Reservation a call's path names, noted on the call; Refused 404 when there is none."""
        res = self.granted_one(call.reservation_id)
        if res is None:
            raise Refused(404, "not_found", "no such reservation")
        call.reservation = res
        return res

    def all(self):
        with self._lock:
            return list(self._by_id.values())

    def queued(self):
        with self._lock:
            return list(self._queue)

    def granted(self):
        """{request id: reservation id} of every grant."""
        with self._lock:
            return dict((rid, res.reservation_id) for rid, res in self._by_request.items())

    def no_work_request_ids(self):
        """Request ids answered 204, in order."""
        with self._lock:
            return list(self._no_work)
