"""Every wait in the harness is bounded by one of these named timeouts.

A bare number of seconds in a check or a plane is a bug: pick the constant
whose sentence matches the wait, so that a slow, shared machine can be
accommodated by changing one line here. Timing *assertions* about the node
(stop latency, deadlines) are contract numbers and live with the checks that
cite their clauses; these constants only bound how long the harness waits.
"""

import threading as _threading
import time as _time

# Use for a step that should be near-instant on an idle machine but may be
# slowed by a loaded one: a process starting up, `--help`, an import probe,
# a line the node prints right after an action, a server answering on
# loopback.
SHORT_TIMEOUT_S = 10.0

# Use for one whole node run in a check (start to exit), when the run moves
# small objects; the harness kills the node after it and keeps the logs.
NODE_RUN_TIMEOUT_S = 60.0

# Use for a run that moves large objects (hundreds of MiB) or is deliberately
# slow, and for waiting on a whole conformance run in a subprocess.
LONG_TIMEOUT_S = 300.0

# Use after SIGKILL: how long to wait for the kernel to reap a killed
# process. A process still there after this is a harness fault (ERROR).
REAP_TIMEOUT_S = 5.0

# Use as the interval of every polling loop (waiting for a child pid to
# appear, sampling /proc, re-checking a condition without an event).
POLL_INTERVAL_S = 0.005

# Use as the interval at which the runner samples the command lines of the
# node's descendants (secret hygiene: no credential in any argv). A child
# that lives for less than this may go unseen.
PROC_SAMPLE_INTERVAL_S = 0.05

# --------------------------------------------------------------------------
# The hang breaker: bounds a run against a node that hangs everywhere.
#
# A node that hangs in every phase and ignores every signal would make each
# check wait its timeouts in full (a minute or so each): a whole run would
# take most of an hour. So once the node has hung in HANG_LIMIT different
# checks of one run (a run killed at its timeout, a phase never reached), every
# later wait ends after at most HUNG_WAIT_S, except a wait for the exit of a
# node that is working, not hung (Deadline's busy). A check in which such a
# shortened wait ran out is NOT-JUDGED (saying which checks hung and how
# to rerun it): the shortened wait proves nothing either way. Rerunning one check
# (`--only ID`, the command every report prints) never trips the breaker;
# `--full-waits` turns it off (the mutants runner uses it: a mutant's checks
# must fail on their own full waits, not go unjudged).

HANG_LIMIT = 3
HUNG_WAIT_S = 2.0

_lock = _threading.Lock()
_enabled = [True]                # --full-waits turns the breaker off for a run
_hung = []                       # IDs of the checks of this run in which the node hung
_local = _threading.local()      # per check thread: .check (its ID), .cut (a shortened wait ran out)


def reset_breaker(enabled=True):
    """Forget every hang: called at the start of each run of checks (enabled=False: never trip)."""
    with _lock:
        del _hung[:]
        _enabled[0] = enabled


def begin_check(check_id):
    """The current thread now runs check_id (until the next begin_check)."""
    _local.check, _local.cut = check_id, False


def current_check():
    """The ID of the check the current thread runs (None outside a check)."""
    return getattr(_local, "check", None)


def node_hung():
    """Record that the node hung in the current check (counted once per check;
    a wait the breaker shortened is no hang)."""
    check = getattr(_local, "check", None)
    if cut_in_this_check():
        return
    with _lock:
        if check not in _hung:
            _hung.append(check)


def hung_checks():
    """IDs of the checks in which the node hung, in the order it happened."""
    with _lock:
        return list(_hung)


def tripped():
    with _lock:
        return _enabled[0] and len(_hung) >= HANG_LIMIT


def cut_in_this_check():
    """True when a wait of the current check ran out only because the breaker shortened it."""
    return getattr(_local, "cut", False)


class Deadline:
    """A harness wait of `timeout` seconds from now, shortened to HUNG_WAIT_S
    once the breaker has tripped (also while the wait is under way: loops
    re-read left() at least every SLICE_S). Once a shortened wait of a check
    has run out, the check will not be judged, so its later waits end at once.

    busy: for a wait on the node itself, a callable that is true while the
    node is working (NodeProcess._working: its tree used CPU within the last
    second). A working node is not hung, so its wait is never shortened: a
    node slow at copying a large object is judged on that, in full."""

    SLICE_S = 0.25
    # busy() is asked at most this often (it reads /proc for the whole tree).
    BUSY_EVERY_S = 0.1

    def __init__(self, timeout, busy=None):
        self.start = _time.monotonic()
        self.timeout = max(0.0, timeout)
        self._busy = busy
        self._working = False
        self._asked = None

    def _limit(self):
        if not tripped():
            return self.timeout
        if cut_in_this_check():
            return 0.0
        now = _time.monotonic()
        if self._busy is not None and (self._asked is None or now - self._asked >= self.BUSY_EVERY_S):
            self._working, self._asked = self._busy(), now
        return self.timeout if self._working else min(self.timeout, HUNG_WAIT_S)

    def left(self):
        """Seconds left (0.0 once over); a shortened wait that is over marks the check."""
        now = _time.monotonic()
        left = self.start + self._limit() - now
        if left > 0:
            return left
        if now - self.start < self.timeout:
            _local.cut = True
        return 0.0

    def slice(self):
        """Seconds to block before looking again (at most SLICE_S)."""
        return min(self.left(), self.SLICE_S)

    def over(self):
        return self.left() <= 0.0
