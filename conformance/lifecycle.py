"""Lives of a long-lived node: start it, SIGKILL it at a moment the plane
chooses, restart it against the same state, and measure what it costs idle.

    from conformance.lifecycle import Lifecycle, held, answered, when
    lives = Lifecycle(ctx, plane.env(), state_dir=plane.state_dir, timeline=plane.timeline)
    first = lives.start(kill_at=held(plane.server, "POST", "/claim", processed=True))
    first.wait(SHORT_TIMEOUT_S)             # the fake holds the claim; the node is SIGKILLed, reaped
    ctx.expect(first.fired, ...)            # the crash happened where the check wanted it
    second = lives.restart(kill_at=answered(plane.server, "POST", "/claim"))
    second.wait(SHORT_TIMEOUT_S)
    third = lives.restart()                 # same argv, environment, cwd: the same state directory
    ... timeline.requests(since=third.t_start) ...
    third.stop(signal.SIGTERM, STOP_LIMIT_S * 2)
    [life.result for life in lives.lives]   # each life's RunResult

Crash points (triggers)
-----------------------
A trigger is armed before the life starts (`start(kill_at=...)`) or on a
running life (`life.kill_at(...)`); a watcher thread SIGKILLs the node the
moment it fires:

held(fake, method, path, nth=1, processed=False)
    the nth matching request arrived and the fake holds it, unanswered
    (`path` is a glob on the exchange's key, as for any fault: the request
    path, unless the route names its exchanges otherwise). The
    hold is a `hang` fault (processed=False: the request body was read, the
    handler never ran, so the fake did nothing with it) or an
    `accept_then_hang` (processed=True: the fake did the work, committed the
    upload, granted the claim, and only the answer is withheld: "the server
    did it, the answer was lost"), installed in the response phase for the
    nth match only. The hold is released (connection closed) after the kill.
answered(fake, method, path, nth=1)
    the fake has sent the last byte of the nth matching answer. The node may
    have read it; the kill follows within milliseconds (the watcher wakes on
    the fake's own event), so what it did in between is on the timeline.
when(predicate, what)
    predicate() became true (re-checked every POLL_INTERVAL_S), e.g. the
    state file on disk reached a phase, or the timeline holds two polls.
line(predicate, stream="stdout")
    the node printed a line satisfying predicate.
after(seconds)
    that long after the trigger was armed (e.g. a seeded random moment).

What a crash is: SIGKILL to the node as a container runtime delivers it.
With PID 1 (the default where the machine allows it) only the node is
signalled, and the kernel ends every other process of its PID namespace with
it, so nothing survives a crash (tests/test_lifecycle.py checks this with a
child, a grandchild and an orphaned setsid() daemon). Without a PID namespace there is no such
guarantee, so the runner kills the node's whole tree instead: every
descendant it can find (a process that left the node's session and was
orphaned is nobody's descendant there, and escapes, as it escapes the
runner's own sweep). Either way the next life starts with no process of the
previous one that the harness can see.

A restart uses the same argv, environment and cwd (so the same state
directory path, whichever variable or argument names it); `restart(args=...,
env_update=...)` changes them on purpose (a restart with fewer slots). When
the Lifecycle knows the state directory, each life keeps `state_files`: what
it held when that life ended (for a crash: exactly what survived it). Every start, signal, kill and
end is noted in the check's transcript and marked on the timeline.

Idle cost
---------
`measure_cpu(proc, window_s)` is the user + system CPU of the node's whole
process tree over a window, read from /proc (the node, every live
descendant, and the children each of them reaped), and the share of one
core it makes. /proc counts in clock ticks (1/SC_CLK_TCK s, 10 ms), per
process and per sample: over a 2 s window one tick is 0.5 % of a core, so a
window should be long enough that two ticks are well inside the budget
judged.
"""

import collections
import fnmatch
import os
import signal as _signal
import threading
import time

from conformance import faults as _faults
from conformance.runner import tree_cpu_s
from conformance.timeouts import POLL_INTERVAL_S, REAP_TIMEOUT_S, SHORT_TIMEOUT_S, Deadline

# How often a trigger's watcher re-checks that its life is still running while
# it waits for the trigger (a fake's event or a predicate wakes it sooner).
WATCH_SLICE_S = 0.05

# A state file larger than this is kept only in its first part in Life.state_files.
MAX_STATE_FILE_BYTES = 1 << 20


# --------------------------------------------------------------------------
# Triggers
# --------------------------------------------------------------------------
class Trigger:
    """A moment to crash a node at. `arm(life)` before the moment can happen,
    `wait(timeout)` True once it has, `disarm()` after the kill (or when the
    life ended without it). `description` names it in reports."""

    description = "a trigger"

    def arm(self, life):
        self.life = life

    def wait(self, timeout):
        raise NotImplementedError

    def disarm(self):
        pass

    def __repr__(self):
        return "<%s: %s>" % (type(self).__name__, self.description)


class _ExchangeTrigger(Trigger):
    """Fires on the nth exchange of one fake that matches method and path."""

    def __init__(self, fake, method=None, path=None, nth=1):
        if nth < 1:
            raise ValueError("nth counts from 1")
        self.fake, self.method, self.path, self.nth = fake, (method or "").upper() or None, path, nth
        self._baseline = 0

    def _what(self):
        which = "" if self.nth == 1 else "%s " % _ordinal(self.nth)
        return "%s%s %s on %s" % (which, self.method or "any request", self.path or "*", self.fake.name)

    def arm(self, life):
        Trigger.arm(self, life)
        transcript = self.fake.transcript
        self._baseline = transcript[-1].seq if transcript else 0

    def _matching(self):
        found = []
        for ex in self.fake.transcript:
            if ex.seq <= self._baseline:
                continue
            if self.method is not None and ex.method.upper() != self.method:
                continue
            if self.path is not None and not fnmatch.fnmatchcase(ex.path.split("?", 1)[0], self.path):
                continue
            found.append(ex)
        return found

    def wait(self, timeout):
        return self.fake.wait_until(self._fired, timeout)


class held(_ExchangeTrigger):
    """The nth matching request arrived and the fake holds it (see the module docstring)."""

    def __init__(self, fake, method=None, path=None, nth=1, processed=False):
        _ExchangeTrigger.__init__(self, fake, method, path, nth)
        self.processed = processed
        self.rule = None
        self.exchange = None
        self.description = "while %s holds the %s unanswered (%s)" % (
            fake.name, self._what().replace(" on %s" % fake.name, ""),
            "processed, answer withheld" if processed else "not processed")

    def arm(self, life):
        _ExchangeTrigger.arm(self, life)
        fault = _faults.accept_then_hang() if self.processed else _faults.hang()
        self.rule = self.fake.add_fault(fault, _faults.Match(method=self.method, key=self.path, phase="response",
                                                             skip=self.nth - 1, first=1))

    def _fired(self):
        if self.rule is None or not self.rule.applied:
            return False
        # The exchange the rule holds: its fault is this rule's, it came after
        # arming (the rule matched it by key, which a route may derive otherwise
        # than from the path), and the hold has begun (the "fault" event).
        description = self.rule.fault.describe("response")
        candidates = dict((ex.seq, ex) for ex in self.fake.transcript
                          if ex.seq > self._baseline and ex.fault == description)
        for event in self.fake.events:
            if event.kind == "fault" and event.seq in candidates:
                self.exchange = candidates[event.seq]
                return True
        return False

    def disarm(self):
        if self.rule is not None:
            self.rule.remove()
            self.rule.release(answer=False)  # the held connection closes; its peer is gone anyway


class answered(_ExchangeTrigger):
    """The fake has sent the last byte of the nth matching answer."""

    def __init__(self, fake, method=None, path=None, nth=1):
        _ExchangeTrigger.__init__(self, fake, method, path, nth)
        self.exchange = None
        self.description = "just after %s answered the %s" % (fake.name,
                                                              self._what().replace(" on %s" % fake.name, ""))

    def _fired(self):
        done = [ex for ex in self._matching() if ex.t_end is not None and ex.outcome == "ok"]
        if len(done) >= self.nth:
            self.exchange = done[self.nth - 1]
            return True
        return False


class when(Trigger):
    """predicate() became true; re-checked every POLL_INTERVAL_S."""

    def __init__(self, predicate, what="a condition holds"):
        self.predicate = predicate
        self.description = "when %s" % what

    def wait(self, timeout):
        deadline = Deadline(timeout)
        while True:
            if self.predicate():
                return True
            if deadline.over():
                return False
            time.sleep(POLL_INTERVAL_S)


class line(Trigger):
    """The node printed a line (on `stream`) satisfying predicate."""

    def __init__(self, predicate, stream="stdout", what=None):
        self.predicate, self.stream = predicate, stream
        self.description = "when the node prints %s on %s" % (what or "a matching line", stream)

    def wait(self, timeout):
        return self.life.proc.wait_for_line(self.stream, self.predicate, timeout)


class after(Trigger):
    """`seconds` after the trigger was armed."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.description = "%.3f s after arming" % seconds

    def arm(self, life):
        Trigger.arm(self, life)
        self._at = time.monotonic() + self.seconds

    def wait(self, timeout):
        left = self._at - time.monotonic()
        if left > timeout:
            time.sleep(max(0.0, timeout))
            return False
        time.sleep(max(0.0, left))
        return True


def _ordinal(n):
    return "%d%s" % (n, {1: "st", 2: "nd", 3: "rd"}.get(n if n < 20 else n % 10, "th"))


# --------------------------------------------------------------------------
# Lives
# --------------------------------------------------------------------------
class Life:
    """One run of the node, from exec to exit; made by Lifecycle.start/restart."""

    def __init__(self, lifecycle, index, proc):
        self.lifecycle, self.index, self.proc = lifecycle, index, proc
        self.trigger = None
        self.fired = False       # the trigger fired and the node was SIGKILLed for it
        self.t_fired = None      # when the trigger was seen to fire
        self.t_kill = None       # when the harness sent SIGKILL (a crash), whatever the reason
        self.state_files = None  # {relative path: bytes} of the state directory once the life ended
        self._watcher = None
        self._ended = threading.Event()
        self._end_lock = threading.Lock()

    def __repr__(self):
        return "Life(%d, pid %s, %s)" % (self.index, self.proc.host_pid,
                                         self.result.describe() if self.result else "running")

    @property
    def t_start(self):
        """The node's exec (time.monotonic())."""
        return self.proc.t_start

    @property
    def t_end(self):
        """The node's exit, once reaped (else None)."""
        return self.result.t_exit if self.result is not None else None

    @property
    def result(self):
        return self.proc.result

    def running(self):
        return self.proc.running()

    # ---- crashing --------------------------------------------------------
    def kill_at(self, trigger):
        """Arm `trigger` on this running life: a watcher thread SIGKILLs the
        node when it fires. Returns the life; `wait` for the end."""
        if self.trigger is not None:
            raise RuntimeError("life %d already has a trigger (%s)" % (self.index, self.trigger.description))
        self.trigger = trigger
        if getattr(trigger, "life", None) is not self:
            trigger.arm(self)
        self._watcher = threading.Thread(target=self._watch, name="conformance-trigger-%d" % self.index, daemon=True)
        self._watcher.start()
        return self

    def _watch(self):
        trigger = self.trigger
        try:
            while self.proc.running():
                if trigger.wait(WATCH_SLICE_S):
                    if self.proc.running():
                        self.t_fired = time.monotonic()
                        self.fired = True
                        self.kill(reason=trigger.description)
                    break
        except Exception as exc:  # a harness fault: shown in the transcript, the check goes on to its own verdict
            self.lifecycle._note("life %d: trigger %s failed: %s: %s" % (self.index, trigger.description,
                                                                          type(exc).__name__, exc))
        finally:
            try:
                trigger.disarm()
            except Exception:
                pass

    def kill(self, reason="now"):
        """SIGKILL the node (a crash; see the module docstring) and reap it; returns its RunResult."""
        if self.proc.running():
            self.t_kill = time.monotonic()
            if self.proc.is_pid1:
                self.proc.signal(_signal.SIGKILL)   # the kernel ends the whole PID namespace with it
            else:
                self.proc.kill()                   # no namespace: the runner kills the tree
            self.lifecycle._mark("life %d: SIGKILL %s" % (self.index, reason), self.t_kill)
        return self.wait(REAP_TIMEOUT_S + SHORT_TIMEOUT_S)

    # ---- stopping and waiting ---------------------------------------------
    def signal(self, signum):
        """Send signum to the node (marked on the timeline); False when it had exited."""
        sent = self.proc.signal(signum)
        if sent:
            self.lifecycle._mark("life %d: %s" % (self.index, _signal.Signals(signum).name), self.proc.signals[-1][0])
        return sent

    def stop(self, signum=_signal.SIGTERM, timeout=SHORT_TIMEOUT_S):
        """Send signum and wait up to `timeout` for the exit (then SIGKILL,
        result.timed_out). Returns the RunResult."""
        self.signal(signum)
        return self.wait(timeout)

    def wait(self, timeout):
        """Wait for the life to end (by itself, or by its trigger's kill) for up
        to `timeout` seconds, then SIGKILL the tree (result.timed_out). Returns
        the RunResult."""
        result = self.proc.wait(timeout)
        if self._watcher is not None and self._watcher is not threading.current_thread():
            self._watcher.join(REAP_TIMEOUT_S)
        self._ended_once()
        return result

    def _ended_once(self):
        with self._end_lock:
            if self._ended.is_set():
                return
            self._ended.set()
        result = self.proc.result
        self.state_files = self.lifecycle._snapshot_state()
        if result is not None:
            self.lifecycle._mark("life %d ended: %s" % (self.index, result.describe()), result.t_exit)


class Lifecycle:
    """Start, crash and restart one node against the same state.

    ctx        the check's Context (lives are started through ctx.start_node,
               so the framework reaps them and reports each run).
    env, args, cwd, pid1   as for ctx.start_node; kept for every restart.
    state_dir  the node's state directory (optional): each life's
               `state_files` is read from it when the life ends.
    timeline   a Timeline to mark starts, signals, kills and ends on (optional).
    """

    def __init__(self, ctx, env, args=(), cwd=None, pid1=True, state_dir=None, timeline=None):
        self.ctx = ctx
        self.env, self.args, self.cwd, self.pid1 = dict(env), list(args), cwd, pid1
        self.state_dir = state_dir
        self.timeline = timeline
        self.lives = []

    @property
    def current(self):
        """The latest life, or None."""
        return self.lives[-1] if self.lives else None

    @property
    def results(self):
        """Each ended life's RunResult, in order."""
        return [life.result for life in self.lives if life.result is not None]

    def start(self, kill_at=None):
        """Start the first life (kill_at: a trigger, armed before the node starts)."""
        if self.lives:
            raise RuntimeError("start() is for the first life; use restart()")
        return self._launch(kill_at)

    def restart(self, kill_at=None, args=None, env_update=None):
        """Start the next life with the same argv, environment and cwd (unless
        args or env_update say otherwise). The previous life must have ended."""
        previous = self.current
        if previous is None:
            raise RuntimeError("restart() before start()")
        if previous.running():
            raise RuntimeError("restart() while life %d is running: kill or stop it first" % previous.index)
        previous.wait(REAP_TIMEOUT_S)
        if args is not None:
            self.args = list(args)
        if env_update:
            self.env.update(env_update)
        return self._launch(kill_at)

    def _launch(self, kill_at):
        index = len(self.lives) + 1
        pending = _Pending(self, index)
        if kill_at is not None:
            kill_at.arm(pending)
        proc = self.ctx.start_node(self.env, args=self.args, cwd=self.cwd, pid1=self.pid1)
        life = Life(self, index, proc)
        self.lives.append(life)
        self._mark("life %d started (pid %s%s)" % (index, proc.host_pid, ", PID 1" if proc.is_pid1 else ""),
                   proc.t_start)
        if kill_at is not None:
            kill_at.life = life
            life.kill_at(kill_at)
        return life

    # ---- helpers ---------------------------------------------------------
    def _mark(self, text, t=None):
        if self.timeline is not None:
            self.timeline.mark(text, t)
        self._note(text)

    def _note(self, text):
        note = getattr(self.ctx, "note", None)
        if note is not None:
            note(text)

    def _snapshot_state(self):
        if not self.state_dir or not os.path.isdir(self.state_dir):
            return None
        files = {}
        for top, _dirs, names in os.walk(self.state_dir):
            for name in names:
                path = os.path.join(top, name)
                try:
                    with open(path, "rb") as handle:
                        files[os.path.relpath(path, self.state_dir)] = handle.read(MAX_STATE_FILE_BYTES)
                except OSError:
                    continue
        return files


class _Pending:
    """Stands for a life about to start while its trigger is armed (a trigger
    reads only `index` and, once started, `proc`)."""

    def __init__(self, lifecycle, index):
        self.lifecycle, self.index = lifecycle, index


# --------------------------------------------------------------------------
# Idle cost
# --------------------------------------------------------------------------
CpuUse = collections.namedtuple("CpuUse", "cpu_s wall_s share processes")
CpuUse.__doc__ = """CPU of a process tree over a window: user + system seconds, the window's
wall seconds, their ratio (1.0 = one core busy the whole window) and how many
processes the tree held at the window's end."""


def measure_cpu(target, window_s):
    """CPU of a node's whole process tree over the next `window_s` seconds.

    target: a NodeProcess, a Life, or a host pid. Returns a CpuUse, or None
    when the node was gone at the start or the end of the window (a node that
    exits while it should be waiting is for the check to judge)."""
    pid = target if isinstance(target, int) else getattr(target, "host_pid", None) or target.proc.host_pid
    start = tree_cpu_s(pid)
    t0 = time.monotonic()
    if start is None:
        return None
    time.sleep(window_s)
    end = tree_cpu_s(pid)
    t1 = time.monotonic()
    if end is None:
        return None
    cpu = max(0.0, end[0] - start[0])
    return CpuUse(cpu, t1 - t0, cpu / (t1 - t0), end[1])
