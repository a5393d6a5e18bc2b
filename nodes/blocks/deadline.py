"""Shared block `deadline`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job
(its section 1 must import the same modules; `conformance.sync --check`
verifies that).
"""
import os
import threading
import time

# ---- block body ----
# deadline: elapsed budgets on the monotonic clock, and a watchdog that
# enforces a budget on calls that only know per-call timeouts.


class Deadline(object):
    """An elapsed-time budget, measured on the monotonic clock.

    A socket timeout bounds silence, not duration: a peer that sends one byte
    just inside every timeout keeps a call alive for ever.  Every wait that
    must end by a fixed time derives its timeout from remaining().
    """

    def __init__(self, seconds):
        self.seconds = float(seconds)
        self.at = time.monotonic() + self.seconds

    def remaining(self):
        """Seconds left, never negative."""
        return max(0.0, self.at - time.monotonic())

    def expired(self):
        return time.monotonic() >= self.at


def sooner(first, second):
    """The deadline that ends first; either argument may be None."""
    if first is None:
        return second
    if second is None or first.at <= second.at:
        return first
    return second


class Watchdog(object):
    """Call `on_expiry` once, from the process's watchdog thread, when `deadline` passes.

    Wrap a stretch of blocking calls that must end by the deadline whatever the
    peer does; `on_expiry` has to make the blocked call return (for a socket:
    shutdown(), which a read or write in another thread notices at once).
    `fired` tells the caller afterwards why its call failed.  Once the `with`
    block has exited, `on_expiry` has returned or will never run: a socket
    kept for the next exchange is never shut by the last one's watchdog.

    Every Watchdog of the process shares one daemon thread (a thread per
    exchange is a clone() and two futex round trips for each request of an
    idle worker's poll).  It ends after LINGER_S with nothing to watch, or at
    once when retire() is called: a process that forks with a preexec_fn
    must be single-threaded first.
    """

    LINGER_S = 60.0  # longer than an idle worker's poll interval: one thread for all its polls

    _lock = threading.Lock()
    _wake = threading.Condition(_lock)
    _armed = set()
    _thread_pid = None  # the pid that started the thread: a forked child starts its own
    _fork_hook = False
    _retiring = False

    def __init__(self, deadline, on_expiry):
        self.deadline = deadline
        self.on_expiry = on_expiry
        self.fired = False
        self._firing = None

    def __enter__(self):
        cls = Watchdog
        with cls._lock:
            cls._retiring = False
            if cls._thread_pid != os.getpid():
                if not cls._fork_hook:  # a child forked while the thread held the lock must not inherit it held
                    os.register_at_fork(after_in_child=cls._forked)
                    cls._fork_hook = True
                cls._armed.clear()  # a forked child inherits the set, never the thread
                thread = threading.Thread(target=cls._run, name="watchdog", daemon=True)
                thread.start()
                cls._thread_pid = os.getpid()
            cls._armed.add(self)
            cls._wake.notify()
        return self

    @classmethod
    def retire(cls):
        """End the watchdog thread as soon as nothing is armed (a later Watchdog starts another)."""
        with cls._lock:
            cls._retiring = True
            cls._wake.notify()

    @classmethod
    def _forked(cls):
        cls._lock = threading.Lock()
        cls._wake = threading.Condition(cls._lock)
        cls._armed = set()
        cls._thread_pid = None

    @classmethod
    def _run(cls):
        with cls._lock:
            while True:
                now = time.monotonic()
                due = [dog for dog in cls._armed if dog.deadline.at <= now]
                if not due:
                    if not cls._armed:
                        if cls._retiring or not cls._wake.wait(cls.LINGER_S) and not cls._armed:
                            cls._thread_pid = None  # the next Watchdog starts a thread again
                            return
                        continue
                    cls._wake.wait(min(dog.deadline.at for dog in cls._armed) - now)
                    continue
                for dog in due:
                    cls._armed.discard(dog)
                    dog._firing = threading.Event()
                cls._lock.release()
                try:
                    for dog in due:
                        dog._fire()
                finally:
                    cls._lock.acquire()

    def _fire(self):
        self.fired = True
        try:
            self.on_expiry()
        except Exception:
            pass  # a watchdog must never print a traceback from its thread
        finally:
            self._firing.set()

    def __exit__(self, *exc_info):
        with Watchdog._lock:
            Watchdog._armed.discard(self)
            firing = self._firing
        if firing is not None:
            firing.wait(1.0)  # on_expiry is running: let it finish before the caller reuses what it cuts
        return False
