"""Shared block `stop`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
"""
import os
import socket

# ---- block body ----
# stop: the signal plumbing.  One Stop object per process holds the stop flag,
# the ledger of sockets with a request in flight, and a wakeup pipe for the
# waits a shutdown() cannot reach (name lookup, connect, TLS handshake).  The
# node installs Stop.handle for SIGTERM and SIGINT itself, in main().


class StopRequested(Exception):
    """Raised by ordinary code that finds a stop it has to honour now."""


class Stop(object):
    """Stop flag, in-flight ledger and wakeup pipe.

    The handler does three things, in this order, and nothing else: set the
    flag (first, so that a failure in the rest still leaves the stop
    recorded); shut down every socket in the ledger while work is still
    abandonable, because close() does not interrupt a blocked read and
    shutdown() does; wake any select() waiting on wait_fd().  Then it prints
    one line naming the signal.  Every decision is taken later by ordinary code
    reading `requested`.

    `abandonable` turns false when the node starts its final receipt: from then
    on a stop only sets the flag.
    """

    def __init__(self, program, stderr_fd=2):
        self.program = program
        self.stderr_fd = stderr_fd  # where the handler's one line goes; None: no line (a node whose stderr is its status)
        self.requested = False
        self.signum = None
        self.abandonable = True
        self._inflight = set()
        self._wake_r = None
        self._wake_w = None

    def open(self):
        """Create the wakeup pipe (call from main(), never at import); it lasts as long as the process."""
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    def handle(self, signum, frame=None):
        """Signal handler for SIGTERM and SIGINT."""
        self.requested = True
        first = self.signum is None
        self.signum = signum
        try:
            if self.abandonable:
                self.abandon_all()
        except Exception:
            pass
        try:
            if self._wake_w is not None:
                os.write(self._wake_w, b"\0")
        except OSError:
            pass  # a full pipe already wakes its reader
        try:
            if first and self.stderr_fd is not None:
                line = "%s: stop requested (signal %d); finishing up\n" % (self.program, signum)
                os.write(self.stderr_fd, line.encode("ascii", "replace"))
        except (OSError, ValueError):
            pass

    def abandon_all(self):
        """Make every blocked call on a ledger socket return now (any thread)."""
        for sock in tuple(self._inflight):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except (OSError, ValueError):
                pass  # already closed or never connected: nothing to end

    def should_abandon(self):
        """True when a stop was requested and the current work may be cut."""
        return self.requested and self.abandonable

    def check(self, what="this step"):
        if self.should_abandon():
            raise StopRequested("stop requested before %s" % what)

    def wait_fd(self):
        """The fd a select() includes to notice a stop, or None when not abandonable."""
        return self._wake_r if self.abandonable else None

    def track(self, sock):
        """Put a socket on the ledger before anything on it can block."""
        self._inflight.add(sock)

    def untrack(self, sock):
        self._inflight.discard(sock)
