"""Shared block `process`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
"""
import os
import signal

# ---- block body ----
# process: what a signal handler and every exit path of a node share.  One
# Process object per process (PROCESS, made by the node at import, opened by
# main()): the wake pipe a handler writes one byte to, the buffers that hold a
# secret (wiped on every exit path, the hard one too), and the final line,
# written once and whole with the exit code fixed beside it, even when a second
# signal lands while it is being written.  A handler records and wakes; the
# decisions are taken by ordinary code.

HANDLED_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def write_all(fd, data):
    """Write every byte with os.write: no buffer a signal handler could re-enter."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass  # a closed stream must not turn into a second failure


def install_handlers(on_signal, signals=HANDLED_SIGNALS):
    """Install on_signal for every stop signal, before the first request.

    As PID 1 a signal with no handler is dropped (the kernel gives init no
    default action), so a node that installs none is only ever SIGKILLed.
    """
    for signum in signals:
        signal.signal(signum, on_signal)


class Process(object):
    """Wake pipe, secret registry and the once-only final line of one process."""

    def __init__(self):
        self.wake_r = None  # the wake pipe's read end: what a select() includes to notice a signal
        self.wake_w = None
        self.signals = 0  # stop signals received so far (a node's handler counts them)
        self.secrets = []  # bytearrays holding a token, a capability or a raw answer
        self.exit_code = None  # fixed by settle(), once; None while the outcome is open
        self.final_written = False
        self.settling = False  # settle() is writing the final line: a hard exit waits for it
        self.exit_pending = False  # a hard exit was asked for while settling: taken right after
        self.before_exit = None  # the node's last act before a hard exit (kill a child's group), or None

    def open_wake(self, wakeup_fd=False):
        """Make the wake pipe (from main(), never at import).

        With wakeup_fd the interpreter also writes to it when any handled
        signal arrives: the kernel may deliver a signal to another thread, and
        Python runs the handler only when the main thread next runs bytecode,
        so a main thread asleep in select() would not notice without it.
        """
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        if wakeup_fd:
            signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        return self.wake_r

    def wake(self):
        """Wake whoever waits on the pipe (safe from a handler and from any thread)."""
        if self.wake_w is not None:
            try:
                os.write(self.wake_w, b"\0")
            except OSError:
                pass  # a full pipe already wakes its reader

    def drain_wake(self):
        """Drop the bytes the pipe holds, so the next select() waits again."""
        try:
            while self.wake_r is not None and os.read(self.wake_r, 512):
                pass
        except OSError:
            pass  # empty (EAGAIN): nothing left to drop

    def hold_secret(self, buffer):
        """Register a bytearray that holds a secret, so that every exit path wipes it."""
        self.secrets.append(buffer)
        return buffer

    def wipe(self, buffer):
        """Overwrite a secret buffer with zeros, in place, and forget it.

        Best effort: a str copy (decoded JSON, a header line) cannot be wiped;
        only the raw buffers can, so they are the only copies kept longer than
        a call.
        """
        if buffer is None:
            return
        buffer[:] = bytes(len(buffer))
        self.secrets[:] = [held for held in self.secrets if held is not buffer]

    def wipe_all(self):
        for buffer in list(self.secrets):
            self.wipe(buffer)

    def settle(self, fd, line, exit_code, signals=HANDLED_SIGNALS):
        """Write the final line (bytes, or None for none) to fd and fix the exit code; the first call wins.

        Returns the exit code in force.  Blocking the signals in this thread
        is not enough to keep a handler out (the kernel may deliver one to
        another thread, and Python runs it here all the same), so a handler
        that wants a hard exit sees `settling` and only asks for it; the exit
        is taken the moment the line and the code are fixed.
        """
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
        self.settling = True
        try:
            if self.exit_code is None:
                if line is not None:
                    write_all(fd, line)
                    self.final_written = True
                self.exit_code = exit_code
        finally:
            self.settling = False
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        if self.exit_pending:
            self.hard_exit(fd, None, self.exit_code)
        return self.exit_code

    def exit_now(self, fd, line, exit_code):
        """A hard exit asked for by a handler: now, or right after the final line being written."""
        if self.settling:
            self.exit_pending = True  # settle() exits as soon as its line and code are fixed
            return
        self.hard_exit(fd, line, exit_code)

    def hard_exit(self, fd, line, exit_code):
        """End the process now: the node's last act, every secret wiped, the final line once."""
        try:
            if self.before_exit is not None:
                self.before_exit()
        except Exception:
            pass  # the exit itself must still happen
        self.wipe_all()
        if self.exit_code is not None:  # already settled: its line is out, its code stands
            os._exit(self.exit_code)
        if line is not None and not self.final_written:
            write_all(fd, line)
        os._exit(exit_code)
