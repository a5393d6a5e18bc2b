"""Shared block `deadline`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job
(its section 1 must import the same modules; `conformance.sync --check`
verifies that).
"""
import datetime
import re
import threading
import time

# ---- block body ----
# deadline: elapsed budgets on the monotonic clock, a watchdog that enforces a
# budget on calls that only know per-call timeouts, and the UTC timestamp
# parser used for wall-clock expiry times.


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


_UTC_TIMESTAMP_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?"
    r"(?:([Zz])|([+-])(\d{2}):?(\d{2}))?\Z"
)


def parse_utc_timestamp(text):
    """ISO-8601 text to epoch seconds, or None when it is not a usable time.

    A trailing Z and an explicit offset are honoured; a time without a zone is
    taken as UTC.  The same grammar on every Python version (3.9's
    datetime.fromisoformat accepts neither Z nor most fraction widths).
    """
    if not isinstance(text, str):
        return None
    match = _UTC_TIMESTAMP_RE.match(text.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, _z, sign, off_h, off_m = match.groups()
    try:
        moment = datetime.datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0),
            int(second or 0), int((fraction or "0")[:6].ljust(6, "0")),
            tzinfo=datetime.timezone.utc,
        )
        if sign:
            offset = datetime.timedelta(hours=int(off_h), minutes=int(off_m))
            moment = moment - offset if sign == "+" else moment + offset
    except (ValueError, OverflowError):
        return None
    return moment.timestamp()
