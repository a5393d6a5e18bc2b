"""Deadline: the capability's expiry ends the session, silently and on time (SESSION-DEADLINE-1..5).

The capability is worthless after its expiry, and the server owns closing the session and
retiring the attempt; a node that keeps calling would only collect refusals, and one that
reports at the deadline would race the server's own sweep. So at the deadline the node goes
quiet and exits 0 with `capability_expired`, every process gone within 1 s. The deadline is kept
on two clocks (a wall clock stepped back must not lengthen a session, one stepped forward
shortens it), by the capability process and, on its own clocks, by the monitor, which kills a
capability process that no longer runs (D12).

The harness cannot step the node's system clock, but it can step the wall clock the node's
Python reads: deadline.clock-step runs the node file through a small launcher that offsets
time.time, time.time_ns, time.clock_gettime(CLOCK_REALTIME) and datetime.datetime.now/utcnow
once the harness writes the step to a file (the capability process is a fork, so it inherits
the launcher). A node given as a command cannot be launched that way: that check is SKIP.
"""

import os
import signal
import time

from conformance.checks import NodeSpec, check
from conformance.checks.session._common import (SCHEDULE_SLACK_S, STOP_BUDGET_S, capability_pid, describe_run,
                                                expect_summary)
from conformance.planes.session import control as control_module

# SESSION-DEADLINE-4: every process gone within 1 s of the deadline.
END_BUDGET_S = STOP_BUDGET_S
# A node that ends before the expiry instant ended early: its clocks and the harness's are the
# same machine's, so only the time the harness takes to see the exit is allowed the other way.
EARLY_SLACK_S = control_module.DEADLINE_SLACK_S
# The capability's lifetime in the expiry checks: long enough for the node to start, admit the
# lease and claim on a loaded machine; its fraction (0.9 s) makes a node that arms its alarm in
# whole seconds end visibly early.
EXPIRY_LIFETIME_S = 3.9
# deadline.clock-step: the capability's lifetime when the wall clock is stepped forward (the
# session must end at the step, long before this), and the step in each direction.
FORWARD_LIFETIME_S = 20.0
CLOCK_STEP_S = 60.0
# How long before the expiry deadline.monitor freezes the capability process.
FREEZE_BEFORE_S = 1.0
# How long the harness waits for an exit past the instant the contract gives, before it kills
# the node: a node that missed its deadline is killed and judged, not waited for.
WAIT_PAST_S = 3.0
# The claim interval deadline.idle hands out: far longer than the capability's life, so only the
# deadline can end the wait (SESSION-DEADLINE-3).
LONG_POLL_S = 30.0

# Runs the node file as __main__ with the wall clock offset, once STEP_FILE holds a number of
# seconds (the harness writes it with a rename, so it is read whole or not at all). The
# monotonic clock is left alone, as a real clock step leaves it.
#   argv: STEP_FILE NODE_FILE ARGV...
CLOCK_SHIM = r"""
import datetime, runpy, sys, time
step_file, sys.argv = sys.argv[1], sys.argv[2:]
state = {"offset": None, "looked": None}
real_time, real_time_ns, real_clock_gettime, monotonic = time.time, time.time_ns, time.clock_gettime, time.monotonic
def offset():
    if state["offset"] is None:
        now = monotonic()
        if state["looked"] is None or now - state["looked"] >= 0.01:
            state["looked"] = now
            try:
                with open(step_file) as handle:
                    state["offset"] = float(handle.read())
            except (OSError, ValueError):
                pass
    return state["offset"] or 0.0
time.time = lambda: real_time() + offset()
time.time_ns = lambda: real_time_ns() + int(offset() * 1e9)
def clock_gettime(clock):
    value = real_clock_gettime(clock)
    return value + offset() if clock == time.CLOCK_REALTIME else value
time.clock_gettime = clock_gettime
class SteppedDateTime(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return cls.fromtimestamp(time.time(), tz)
    @classmethod
    def utcnow(cls):
        return cls.utcfromtimestamp(time.time())
datetime.datetime = SteppedDateTime
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _expiry(ctx, plane):
    found = plane.control.expiry()
    ctx.expect(found is not None, expected="a lease issued", actual=describe_run(plane),
               diagnosis="exchange the identity token for a lease before anything else: the run got no lease, so it "
                         "never reached the deadline this check needs")
    return found[1]


def _wait_past(plane, instant):
    """Wait for the exit until WAIT_PAST_S after instant (monotonic), then kill."""
    return plane.wait(timeout=max(0.0, instant - time.monotonic()) + WAIT_PAST_S)


def _expect_end_at(ctx, plane, instant, what):
    """The node exited no earlier than instant and within END_BUDGET_S (+ slack) after it."""
    result = plane.result
    took = result.t_exit - instant
    ctx.expect(not result.timed_out and -EARLY_SLACK_S <= took <= END_BUDGET_S + SCHEDULE_SLACK_S,
               expected="every process gone at %s: not before it, and within %.1f s after" % (what, END_BUDGET_S),
               actual="%s (%s)" % ("still running %.1f s after it (killed)" % took if result.timed_out
                                   else "exit %.2f s %s it" % (abs(took), "after" if took >= 0 else "before"),
                                   describe_run(plane)),
               diagnosis="the session ends at the capability's expiry, on the earlier of the wall clock and the "
                         "monotonic clock (SESSION-DEADLINE-1, -4); a wait or an alarm that ends it early or late "
                         "is the defect")


def _expect_silent_end(ctx, plane, expiry):
    """SESSION-DEADLINE-2, -4: capability_expired, exit 0; no callback at or after the expiry."""
    expect_summary(ctx, plane, terminal_state="capability_expired")
    finished = [c for c in plane.control.calls("append") if b"attempt_finished" in (c.body or b"")]
    ctx.expect(not finished, expected="no attempt_finished append (the deadline ends the session silently)",
               actual="%d attempt_finished append(s)" % len(finished),
               diagnosis="at the deadline nothing more is sent: the server closes the session (SESSION-DEADLINE-4)")
    late = [c for c in plane.control.calls() if c.bearer == "capability"
            and c.t > expiry + control_module.DEADLINE_SLACK_S]
    ctx.expect(not late, expected="no capability call arriving more than %d ms after the expiry"
                                  % (control_module.DEADLINE_SLACK_S * 1000),
               actual=lambda: ", ".join("%s %.2f s after" % (c.verb, c.t - expiry) for c in late[:4]),
               diagnosis="no capability call starts at or after the deadline (SESSION-DEADLINE-2)")


@check("deadline.idle", clauses=["SESSION-DEADLINE-2", "SESSION-DEADLINE-3", "SESSION-DEADLINE-4"], level="MUST",
       title="the capability expires while the node waits a 30 s claim interval: it ends at the expiry, silently",
       fakes="a capability that lives 3.9 s; the lease and every claim answer give a 30 s claim interval; no probe",
       expected="exit 0 at the expiry (not before, within 1 s after); summary capability_expired; no "
                "attempt_finished; no capability call after the expiry")
def _(ctx):
    plane = ctx.plane(lifetime_s=EXPIRY_LIFETIME_S, claim_poll_s=LONG_POLL_S)
    plane.start()
    plane.wait_claims(1)
    expiry = _expiry(ctx, plane)
    _wait_past(plane, expiry)
    _expect_end_at(ctx, plane, expiry, "the expiry")
    _expect_silent_end(ctx, plane, expiry)


@check("deadline.probe-in-flight", clauses=["SESSION-DEADLINE-3", "SESSION-DEADLINE-4", "SESSION-DEADLINE-2"],
       level="MUST",
       title="the capability expires while a probe's acquisition is pending: no report, no settled event",
       fakes="a capability that lives 3.9 s; one probe whose acquisition stays pending (the acquisition ceiling, "
             "10 s, is longer than the time left)",
       expected="exit 0 at the expiry (within 1 s after); summary capability_expired; no report, no settled event, "
                "no attempt_finished")
def _(ctx):
    plane = ctx.plane(lifetime_s=EXPIRY_LIFETIME_S)
    source = plane.add_source(rows=[["a", 1]], ready_after_reads=None)
    plane.probe("source_inspect", source)
    plane.start()
    plane.wait_for(plane.control.started("read", 1), "the first acquisition read")
    expiry = _expiry(ctx, plane)
    _wait_past(plane, expiry)
    _expect_end_at(ctx, plane, expiry, "the expiry")
    _expect_silent_end(ctx, plane, expiry)
    ctx.expect(not plane.control.reports(), expected="no report of the probe in flight",
               actual="%d report(s)" % len(plane.control.reports()),
               diagnosis="at the deadline the probe in flight is not reported: the capability is spent")
    settled = [e for e in plane.control.progress_events() if e.event_type == "source_probe_completed"]
    ctx.expect(not settled, expected="no settled event", actual="%d" % len(settled),
               diagnosis="at the deadline the probe in flight gets no settled event either: the capability is spent")


@check("deadline.monitor", clauses=["SESSION-DEADLINE-5", "SESSION-DEADLINE-4"], level="MUST",
       title="the monitor ends a frozen capability process at the deadline",
       fakes="a capability that lives 3.9 s; no probe; the harness SIGSTOPs the capability process 1 s before "
             "the expiry",
       expected="exit 0 at the expiry (within 1 s after); summary capability_expired")
def _(ctx):
    plane = ctx.plane(lifetime_s=EXPIRY_LIFETIME_S)
    plane.start()
    plane.wait_claims(1)
    expiry = _expiry(ctx, plane)
    pid = capability_pid(ctx, plane)
    time.sleep(max(0.0, expiry - FREEZE_BEFORE_S - time.monotonic()))
    os.kill(pid, signal.SIGSTOP)
    ctx.note("harness: SIGSTOP to the capability process (pid %d), %.2f s before the expiry"
             % (pid, expiry - time.monotonic()))
    _wait_past(plane, expiry)
    _expect_end_at(ctx, plane, expiry, "the expiry (the capability process frozen)")
    expect_summary(ctx, plane, terminal_state="capability_expired")


def _launch_stepped(ctx, plane, step_file, **start):
    """Start the node file through CLOCK_SHIM (SKIP for a node given as a command)."""
    if ctx.node.path is None:
        ctx.skip("the node is a command (-- COMMAND): the harness can step only the wall clock of a Python node "
                 "file it launches itself")
    original = ctx.node
    # The node's own interpreter (--python), not this harness's: the shim runs in the node's process.
    ctx.node = NodeSpec([original.argv[0], "-c", CLOCK_SHIM, step_file] + original.argv[1:], original.path,
                        original.display, python=original.python)
    try:
        return plane.start(**start)
    finally:
        ctx.node = original


def _step(ctx, step_file, seconds):
    """Step the node's wall clock by seconds from now (written whole, by a rename)."""
    with open(step_file + ".new", "w") as handle:
        handle.write("%r" % float(seconds))
    os.rename(step_file + ".new", step_file)
    ctx.note("harness: the node's wall clock stepped by %+.0f s" % seconds)
    return time.monotonic()


@check("deadline.clock-step", clauses=["SESSION-DEADLINE-1"], level="MUST",
       title="a wall clock stepped back does not lengthen the session; one stepped forward shortens it",
       fakes="the node's wall clock (time.time, datetime.now, ...) is stepped once the session is claiming: back "
             "60 s with 3.9 s of capability left; forward 60 s with 20 s left",
       expected="stepped back: exit 0 at the expiry; stepped forward: exit 0 within 1 s of the step; both "
                "capability_expired")
def _(ctx):
    back = ctx.plane(lifetime_s=EXPIRY_LIFETIME_S)
    step_file = os.path.join(ctx.tmpdir("clock-back"), "step")
    _launch_stepped(ctx, back, step_file)
    back.wait_claims(2)
    expiry = _expiry(ctx, back)
    _step(ctx, step_file, -CLOCK_STEP_S)
    _wait_past(back, expiry)
    _expect_end_at(ctx, back, expiry, "the expiry (wall clock stepped back %.0f s)" % CLOCK_STEP_S)
    expect_summary(ctx, back, terminal_state="capability_expired", variant="stepped back")

    ahead = ctx.plane(lifetime_s=FORWARD_LIFETIME_S)
    step_file = os.path.join(ctx.tmpdir("clock-forward"), "step")
    _launch_stepped(ctx, ahead, step_file)
    ahead.wait_claims(2)
    stepped = _step(ctx, step_file, CLOCK_STEP_S)
    _wait_past(ahead, stepped)
    _expect_end_at(ctx, ahead, stepped, "the step forward (%.0f s, past the expiry)" % CLOCK_STEP_S)
    expect_summary(ctx, ahead, terminal_state="capability_expired", variant="stepped forward")
