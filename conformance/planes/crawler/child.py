"""The normaliser child: a scripted fake the node runs, or the node's own (CRAWLER-CHILD-*).

With a behaviour (the plane's ``child={...}``), this fake writes the scripted
normaliser of ``conformance.planes.crawler_child`` and pins it with
``MOSTLYRIGHT_CRAWLER_CHILD``; ``record()`` reads back what it saw. Without
one, the node runs its own normaliser, and this fake still finds it among the
node's descendants (``pids()``) and sees that none outlives the run.
"""

import json
import os
import signal
import time

from conformance import runner as _runner
from conformance.invariants import Violation
from conformance.timeouts import POLL_INTERVAL_S

__all__ = ["Child"]

# Slack when comparing a process's start time (clock-tick resolution, boot
# clock) with the node's exit (monotonic clock): about five ticks.
START_TIME_SLACK_S = 0.05
# How long a child may take to die after the node exits before it counts as
# left behind: a parent-death SIGKILL is delivered at once, but the process
# still has to be scheduled to exit (CRAWLER-CHILD-3 asks "about 1 s").
CHILD_EXIT_GRACE_S = 1.0


class Child(object):
    """The child of one run. directory: where a scripted child and its record
    go; behaviour: a crawler_child behaviour (None: the node's own child);
    node_process: a callable returning the node's process (None before start).

    Observing: path, record_path, record(), pids(), started().
    """

    def __init__(self, directory, behaviour=None, node_process=lambda: None):
        self.directory = directory
        self._node_process = node_process
        self.path = None
        self.record_path = None
        if behaviour is not None:
            self.write(behaviour)

    def write(self, behaviour):
        """Write the scripted normaliser and pin it (MOSTLYRIGHT_CRAWLER_CHILD)."""
        from conformance.planes import crawler_child
        behaviour = dict(behaviour)
        behaviour.setdefault("record", os.path.join(self.directory, "record.json"))
        self.record_path = behaviour["record"]
        self.path = crawler_child.write_child(os.path.join(self.directory, "normaliser"), behaviour)
        return self.path

    def env(self):
        """The node's variables for this child: the pin, when scripted."""
        return {"MOSTLYRIGHT_CRAWLER_CHILD": self.path} if self.path is not None else {}

    # ---------------------------------------------------------------- observe
    def record(self):
        """What the scripted child recorded (a dict), or None."""
        if self.record_path is None or not os.path.exists(self.record_path):
            return None
        with open(self.record_path, "rb") as handle:
            raw = handle.read()
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError:
            return None

    def record_bytes(self):
        """The record's raw bytes (None without one), for the secret scan."""
        if self.record_path is None or not os.path.exists(self.record_path):
            return None
        with open(self.record_path, "rb") as handle:
            return handle.read()

    def pids(self):
        """Host pids of the node's descendants that look like a normaliser."""
        proc = self._node_process()
        if proc is None or not proc.running():
            return []
        found = []
        for pid in _runner.descendants(proc.host_pid):
            argv = _runner.read_cmdline(pid) or []
            if "--input-fd" in argv or (self.path is not None and self.path in argv):
                found.append(pid)
        return found

    def started(self):
        """Predicate for plane.stop_when: the scripted child wrote its record,
        or a child of the node runs."""
        def started():
            if self.record_path is not None and os.path.exists(self.record_path):
                return True
            return bool(self.pids())
        return started

    # ---------------------------------------------------------------- invariants
    def invariants(self, result):
        """CRAWLER-CHILD-10: no normaliser outlives the node (result: the run).

        The runner only sees the node's own session, and the node puts its child
        in a session of its own, so the fake looks itself: every descendant the
        runner saw while the node ran, and the pid the scripted child recorded
        (a host pid unless the node ran as PID 1, whose namespace dies with it).
        A live process counts only if it still has the same argv and started
        before the node exited (no pid reuse). One left running is killed.
        """
        candidates = dict((pid, argv) for pid, argv in (result.seen_cmdlines or {}).items()
                          if pid != result.host_pid)
        record = self.record()
        if isinstance(record, dict) and not result.is_pid1 and isinstance(record.get("pid"), int):
            candidates.setdefault(record["pid"], None)

        def left(pid, argv):
            live = _runner.read_cmdline(pid)
            if not live:
                return None
            if argv is not None and live != argv:
                return None
            if argv is None and not (self.path and self.path in live):
                return None
            return live if _alive_since_before(pid, result.t_exit) else None

        found = []
        grace_end = (result.t_exit or time.monotonic()) + CHILD_EXIT_GRACE_S
        for pid, argv in sorted(candidates.items()):
            live = left(pid, argv)
            while live is not None and time.monotonic() < grace_end:
                time.sleep(POLL_INTERVAL_S)
                live = left(pid, argv)
            if live is None:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            found.append(Violation("CRAWLER-CHILD-10: no child outlives the run",
                                   "no process the node started is running after it exits",
                                   "pid %d (%s) was still running; killed" % (pid, " ".join(live)[:200]),
                                   "kill the child's process group and reap it on every path"))
        return found


def _alive_since_before(pid, t_exit):
    """True when pid is a live non-zombie that started before monotonic t_exit."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            stat = handle.read()
    except OSError:
        return False
    fields = stat[stat.rfind(")") + 2:].split()
    if not fields or fields[0] in ("Z", "X"):
        return False
    if t_exit is None:
        return True
    try:
        ticks = int(fields[19])
        boot_now = time.clock_gettime(time.CLOCK_BOOTTIME)
    except (IndexError, ValueError, AttributeError, OSError):
        return True
    started_boot = ticks / float(os.sysconf("SC_CLK_TCK"))
    exit_boot = boot_now - (time.monotonic() - t_exit)
    return started_boot <= exit_boot + START_TIME_SLACK_S
