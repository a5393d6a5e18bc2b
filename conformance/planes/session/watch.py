"""What the session plane sees of a running node from outside: its processes and its scratch.

A session worker is several processes (the monitor, the capability process, probe children,
Service session processes), most of them in sessions of their own, and it removes its scratch
directory at the end (SESSION-ISOLATION-9). So what the runner sees after the run (the node's
own argv and environment, the processes left in its session) is not enough to judge
SESSION-SECRET-2 or SESSION-ISOLATION-3. A Watch samples the run while it lasts, every
PROC_SAMPLE_INTERVAL_S:

- every process of the node's tree: pid, start time, each argv it had, its environment (read
  again when its argv changes: a fork reads as its parent until it execs); unreadable entries
  (a non-dumpable capability process) and exiting ones (a zombie reads an empty argv) are
  skipped;
- every file under the run's TMPDIR, read again when its size or mtime changes, and scanned for
  the plane's secrets at once (the file is gone by the end).

After the run, leftovers() names every sampled process still alive (the same pid and start
time, not a zombie), whichever session it moved to, and kill_leftovers() ends them.
"""

import os
import signal
import threading
import time

from conformance.invariants import read_for_scan
from conformance.runner import descendants, read_cmdline, read_environ, read_proc
from conformance.timeouts import POLL_INTERVAL_S, PROC_SAMPLE_INTERVAL_S, Deadline

__all__ = ["Watch", "SeenProcess"]

# A file under TMPDIR is scanned whole up to this size, beyond it in its first and last
# part: a bundle being streamed grows with every sample, and a secret a node writes to a
# scratch file is written whole, near an end.
MAX_FILE_SCAN_BYTES = 4 << 20
# How long after the run a sampled process may still be dying: the contract gives the
# monitor's kill 1 s (SESSION-ISOLATION-3, -4).
LEFTOVER_GRACE_S = 1.0


def _stat(pid):
    """(state, start time in clock ticks) of pid, or None when it is gone."""
    try:
        fields = read_proc("/proc/%d/stat" % pid).rsplit(b")", 1)[1].split()
        return fields[0].decode("ascii", "replace"), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


class SeenProcess(object):
    """One process of the node's tree as sampled: pid, start (clock ticks), argvs (each
    distinct argv seen, in order), environs (each environment read, one per argv)."""

    def __init__(self, pid, start):
        self.pid, self.start = pid, start
        self.argvs, self.environs = [], []

    def __repr__(self):
        return "SeenProcess(%d, %r)" % (self.pid, self.argvs[-1] if self.argvs else None)


class Watch(object):
    """Samples one NodeProcess until it has been reaped; secrets() -> the values a scratch
    file must not hold (read at each scan: tokens are minted during the run)."""

    def __init__(self, proc, scratch, secrets):
        self.proc, self.scratch, self._secrets = proc, scratch, secrets
        self._lock = threading.Lock()
        self._seen = {}             # (pid, start) -> SeenProcess
        self._files = {}            # path -> (size, mtime_ns) last scanned
        self.file_hits = []         # [(relative path, secret)] found in scratch files
        self.files_seen = set()     # relative paths of every file seen under TMPDIR
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="session-watch-%s" % proc.host_pid, daemon=True)
        self._thread.start()

    def _loop(self):
        while True:
            running = self.proc.running()
            self.sample()
            if not running or self._stop.wait(PROC_SAMPLE_INTERVAL_S):
                return

    def sample(self):
        """One pass over the tree and the scratch directory (the thread calls it)."""
        for pid in [self.proc.host_pid] + descendants(self.proc.host_pid):
            stat = _stat(pid)
            argv = read_cmdline(pid)
            # An exiting process (a zombie) reads an empty argv: recorded, it would become the
            # process's last argv and hide what it ran (a probe child seen only as it died).
            if stat is None or not argv or stat[0] in ("Z", "X"):
                continue
            with self._lock:
                seen = self._seen.setdefault((pid, stat[1]), SeenProcess(pid, stat[1]))
                fresh = not seen.argvs or seen.argvs[-1] != argv
                if fresh:
                    seen.argvs.append(argv)
            if fresh:
                environ = read_environ(pid)
                with self._lock:
                    seen.environs.append(environ)
        self._scan_files()

    def _scan_files(self):
        for top, _dirs, names in os.walk(self.scratch):
            for name in names:
                path = os.path.join(top, name)
                try:
                    info = os.stat(path)
                    if self._files.get(path) == (info.st_size, info.st_mtime_ns):
                        continue
                    self._files[path] = (info.st_size, info.st_mtime_ns)
                    data = read_for_scan(path, MAX_FILE_SCAN_BYTES)
                except OSError:  # gone, or not readable: nothing to judge
                    continue
                relative = os.path.relpath(path, self.scratch)
                hits = [secret for secret in self._secrets() if secret and secret.encode("utf-8") in data]
                with self._lock:
                    self.files_seen.add(relative)
                    self.file_hits.extend((relative, secret) for secret in hits)

    def stop(self):
        """End the sampling (after the run: the thread ends by itself once the node is reaped)."""
        self._stop.set()
        self._thread.join(PROC_SAMPLE_INTERVAL_S * 20)

    def processes(self):
        """Every process sampled (SeenProcess), the node first."""
        with self._lock:
            return sorted(self._seen.values(), key=lambda seen: (seen.pid != self.proc.host_pid, seen.start))

    def _alive(self):
        found = []
        for seen in self.processes():
            stat = _stat(seen.pid)
            if stat is not None and stat[1] == seen.start and stat[0] not in ("Z", "X"):
                found.append(seen)
        return found

    def leftovers(self, grace_s=None):
        """The sampled processes still alive once the node was reaped, after grace_s (default
        LEFTOVER_GRACE_S) to die."""
        deadline = Deadline(LEFTOVER_GRACE_S if grace_s is None else grace_s)
        alive = self._alive()
        while alive and not deadline.over():
            time.sleep(POLL_INTERVAL_S)
            alive = self._alive()
        return alive

    def kill_leftovers(self):
        """SIGKILL every sampled process still alive; returns those it killed."""
        alive = self._alive()
        for seen in alive:
            try:
                os.kill(seen.pid, signal.SIGKILL)
            except OSError:
                pass
        return alive
