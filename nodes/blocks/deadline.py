"""Shared block `deadline`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job
(its section 1 must import the same modules; `conformance.sync --check`
verifies that).
"""
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
    """Call `on_expiry` once, from a daemon thread, when `deadline` passes.

    Wrap a stretch of blocking calls that must end by the deadline whatever the
    peer does; `on_expiry` has to make the blocked call return (for a socket:
    shutdown(), which a read or write in another thread notices at once).
    `fired` tells the caller afterwards why its call failed.
    """

    def __init__(self, deadline, on_expiry):
        self.deadline = deadline
        self.on_expiry = on_expiry
        self.fired = False
        self._timer = None

    def __enter__(self):
        self._timer = threading.Timer(self.deadline.remaining(), self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def _fire(self):
        self.fired = True
        try:
            self.on_expiry()
        except Exception:
            pass  # a watchdog must never print a traceback from its thread

    def __exit__(self, *exc_info):
        self._timer.cancel()
        self._timer.join(1.0)
        return False
