"""Shared block `process`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
"""
import os
import signal

# ---- block body ----
# process: what a signal handler and every exit path share.  One Process per
# process (PROCESS, made at import, opened by main()): the wake pipe a handler
# writes a byte to, the buffers holding a secret (wiped on every exit path,
# the hard one too), and the final line, written once and whole with the exit
# code fixed beside it even when a second signal lands meanwhile.

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
    """Before the first request: as PID 1 a signal with no handler is dropped, so only SIGKILL ends the node."""
    for signum in signals:
        signal.signal(signum, on_signal)


class Process(object):
    """Wake pipe, secret registry and the once-only final line of one process."""

    def __init__(self):
        self.wake_r = self.wake_w = None  # the wake pipe; a select() includes wake_r to notice a signal
        self.signals = 0  # stop signals received (a node's handler counts them)
        self.secrets = []  # bytearrays holding a token, a capability or a raw answer
        self.exit_code = None  # fixed by settle(), once
        self.final_written = False
        self.settling = False  # settle() is writing the final line: a hard exit waits for it
        self.exit_pending = False  # a hard exit asked for meanwhile, taken right after
        self.before_exit = None  # the node's last act before a hard exit (kill a child's group)

    def open_wake(self, wakeup_fd=False):
        """Make the wake pipe (from main()).  wakeup_fd: the interpreter writes to it on any handled signal,
        for a main thread asleep in select() while the kernel delivered the signal to another thread."""
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        if wakeup_fd:
            signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        return self.wake_r

    def wake(self):
        if self.wake_w is not None:
            try:
                os.write(self.wake_w, b"\0")
            except OSError:
                pass  # a full pipe already wakes its reader

    def drain_wake(self):
        try:
            while self.wake_r is not None and os.read(self.wake_r, 512):
                pass
        except OSError:
            pass  # empty: the next select() waits again

    def hold_secret(self, buffer):
        self.secrets.append(buffer)
        return buffer

    def wipe(self, buffer):
        """Zero a secret buffer in place.  Best effort: a str copy cannot be wiped, so only raw buffers are kept."""
        if buffer is not None:
            buffer[:] = bytes(len(buffer))
            self.secrets[:] = [held for held in self.secrets if held is not buffer]

    def wipe_all(self):
        for buffer in list(self.secrets):
            self.wipe(buffer)

    def settle(self, fd, line, exit_code, signals=HANDLED_SIGNALS):
        """Write the final line (None: none) and fix the exit code; the first call wins; returns the code.

        Blocking the signals here does not keep a handler out (the kernel may
        pick another thread, and Python runs the handler here all the same), so
        a handler that wants a hard exit sees `settling` and only asks for it.
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
        """A hard exit from a handler: now, or right after the final line being written."""
        if self.settling:
            self.exit_pending = True
        else:
            self.hard_exit(fd, line, exit_code)

    def hard_exit(self, fd, line, exit_code):
        """The node's last act, every secret wiped, the final line once (a settled code stands), then _exit."""
        try:
            if self.before_exit is not None:
                self.before_exit()
        except Exception:
            pass  # the exit itself must still happen
        self.wipe_all()
        if self.exit_code is None:
            if line is not None and not self.final_written:
                write_all(fd, line)
            self.exit_code = exit_code
        os._exit(self.exit_code)
