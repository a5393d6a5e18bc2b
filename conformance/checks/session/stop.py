"""Stops: a stop drains the session, as PID 1, and always ends in exit 0 (SESSION-STOP-1..7).

A session worker's life always ends in a stop of some kind (a scale-down, a task's end), so a
stop is a normal end (D31): the probe in flight gets a definite answer at once
(SESSION_WORKER_STOPPING unless its result was held), the attempt finishes as
`service_stopped`, and the node is gone within 1 s when the control plane answers, within
STOP_GRACE_S + 1 s = 6 s whatever it does (D17), well inside the 10 s a platform grants after
SIGTERM. A second stop ends it now. Every check here runs the node as the init of a PID
namespace, where a signal without a handler is dropped (SESSION-STOP-1); they SKIP where PID
namespaces are unavailable. Times are measured from the signal to the node's exit.
"""

import signal
import time

from conformance.checks import check
from conformance.checks.session._common import (DRAIN_BUDGET_S, NEW_WORK, SCHEDULE_SLACK_S, STOP_BUDGET_S,
                                                describe_run, each_variant, expect_summary, faults, stop_unnoticed,
                                                stop_unnoticed_so_far)
from conformance.planes.session import control as control_module

# SESSION-STOP-2: a request that starts this long after the signal started after it (the
# contract's own tolerance for "no new request").
AFTER_SIGNAL_SLACK_S = control_module.DEADLINE_SLACK_S
# How long the harness waits for the exit after a stop before it kills the node: past the
# drain's bound (6 s), so a node that runs out its grace is still measured.
AFTER_STOP_TIMEOUT_S = 15.0
# stop.probe-in-flight: the report of the probe in flight arrives this soon after the stop: a TLS
# handshake on a loaded machine, and half the acquisition poll (1 s), a wait that ends only by itself.
STOP_ANSWER_S = 0.5
# stop.probe-in-flight: the stop comes this long after the first read was answered, when the node is
# in the acquisition poll's wait (1 s), not in the read itself.
INTO_WAIT_S = 0.1
# stop.drain-bound: the window, after the stop, in which the heartbeat (every 0.2 s, scaled) must go
# on while the report hangs, and the fewest beats it must hold on a loaded machine.
DRAIN_BEATS_FROM_S = 1.0
DRAIN_BEATS_TO_S = 4.0
MIN_DRAIN_BEATS = 3


def _start(ctx, plane, **start):
    """Start the node as PID 1 (SKIP when that is not available here)."""
    ctx.require_pid1()
    proc = plane.start(pid1="require", **start)
    ctx.expect(proc.is_pid1, expected="the node runs as PID 1", actual="it does not (harness)",
               diagnosis="the harness could not run the node as PID 1 here, which is not the node's fault: "
                         "rerun where PID namespaces are allowed")
    return proc


def _expect_exit_within(ctx, plane, budget_s, since, what):
    took = plane.result.t_exit - since
    ctx.expect(not plane.result.timed_out and took <= budget_s,
               expected="every process gone within %.1f s of %s (%.1f s and the machine's slack)"
                        % (budget_s, what, budget_s - SCHEDULE_SLACK_S),
               actual="%s (%s)" % ("still running %.1f s after it (killed)" % took if plane.result.timed_out
                                   else "exit %.2f s after it" % took, describe_run(plane)),
               diagnosis=lambda: stop_unnoticed(plane) or (
                   "a stop ends every wait at once and the drain is bounded (SESSION-STOP-2, -5): wake every wait, "
                   "cut what blocks, and kill what will not stop"))


def _expect_no_new_work(ctx, plane, t_signal):
    late = [(c.verb, c.t) for c in plane.control.calls() if c.verb in NEW_WORK]
    late += [("download", ex.t_start) for ex in plane.store.transcript]
    late = [(what, t - t_signal) for what, t in late if t > t_signal + AFTER_SIGNAL_SLACK_S]
    ctx.expect(not late, expected="no claim, acquisition or download starting more than %d ms after the stop"
                                  % (AFTER_SIGNAL_SLACK_S * 1000),
               actual=lambda: "%d started later: %s" % (len(late), ", ".join(
                   "%s %.2f s after" % item for item in late[:4])),
               diagnosis=lambda: stop_unnoticed(plane) or (
                   "after a stop nothing new begins: look at the stop before every claim, create, read and "
                   "download (SESSION-STOP-2)"))


def _expect_finished_last(ctx, plane, outcome="service_stopped"):
    """attempt_finished with this outcome is the last event, and no capability call follows its append."""
    events = plane.control.progress_events()
    finished = [e for e in events if e.event_type == "attempt_finished"]
    ctx.expect(len(finished) == 1 and events[-1] is finished[0] and finished[0].facts == {"outcome": outcome},
               expected="one attempt_finished, outcome %s, the last event" % outcome,
               actual=lambda: "events %s" % [(e.event_type, e.facts) for e in events[-4:]],
               diagnosis="the drain ends the event stream with attempt_finished outcome service_stopped "
                         "(SESSION-STOP-4, D17)")
    after = [c for c in plane.control.calls() if c.bearer == "capability" and c.t > finished[0].call.t]
    ctx.expect(not after, expected="no capability call after the attempt_finished append",
               actual=lambda: ", ".join(c.verb for c in after),
               diagnosis="attempt_finished is the attempt's last word: stop the heartbeat and send nothing with the "
                         "capability once its append begins")


@check("stop.idle", clauses=["SESSION-STOP-1", "SESSION-STOP-2", "SESSION-STOP-4", "SESSION-STOP-5"], level="MUST",
       title="as PID 1, SIGTERM or SIGINT while the node waits between claims: exit 0 within 1 s, stopped",
       fakes="the node is PID 1; no probe; the stop after the second claim (variants SIGTERM, SIGINT)",
       expected="exit 0 within 1 s; summary terminal_state service_stopped; attempt_finished outcome "
                "service_stopped, the last event and the last capability call; no claim after the stop")
def _(ctx):
    def act(label, signum):
        plane = ctx.plane()
        _start(ctx, plane)
        t_signal = plane.stop_when(plane.control.started("claim", 2), signum=signum, what="the second claim")
        plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
        _expect_exit_within(ctx, plane, STOP_BUDGET_S + SCHEDULE_SLACK_S, t_signal, "the stop (%s)" % label)
        expect_summary(ctx, plane, terminal_state="service_stopped", variant=label)
        ctx.expect("KeyboardInterrupt" not in plane.result.stderr, expected="no KeyboardInterrupt",
                   actual="stderr %r" % plane.result.stderr[-300:],
                   diagnosis="handle SIGINT with the same stop handler as SIGTERM, in every process of the node, so "
                             "Python's default KeyboardInterrupt never reaches the code")
        _expect_no_new_work(ctx, plane, t_signal)
        _expect_finished_last(ctx, plane)
    each_variant(ctx, [("SIGTERM", signal.SIGTERM), ("SIGINT", signal.SIGINT)], act)


@check("stop.probe-in-flight", clauses=["SESSION-STOP-2", "SESSION-STOP-3", "SESSION-STOP-4", "SESSION-STOP-5"],
       level="MUST",
       title="a stop while a probe's acquisition is pending: the probe is reported SESSION_WORKER_STOPPING at once",
       fakes="the node is PID 1; one probe whose acquisition stays pending; SIGTERM 0.1 s after its first read "
             "was answered (the node waits the acquisition poll)",
       expected="the probe reported failed SESSION_WORKER_STOPPING, its settled event (outcome failed), then "
                "attempt_finished service_stopped; no read, create or claim after the stop; exit 0 within 1 s")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(rows=[["a", 1], ["b", 2]], ready_after_reads=None)
    probe_id = plane.probe("source_inspect", source)
    _start(ctx, plane)

    def waiting():  # the first read answered "pending": the node sleeps until the next read
        reads = plane.control.calls("read")
        ended = reads[0].exchange.t_end if reads else None
        return ended is not None and time.monotonic() - ended >= INTO_WAIT_S
    t_signal = plane.stop_when(waiting, what="the wait after the first acquisition read")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    _expect_exit_within(ctx, plane, STOP_BUDGET_S + SCHEDULE_SLACK_S, t_signal, "the stop")
    reports = plane.control.reports(probe_id)
    doc = reports[0].doc if reports else None
    ctx.expect(doc is not None and doc.get("outcome") == "failed" and doc.get("failure_code")
               == "SESSION_WORKER_STOPPING",
               expected="the probe in flight reported failed with SESSION_WORKER_STOPPING",
               actual=lambda: "%s (%s)" % ("report %s/%s" % (doc.get("outcome"), doc.get("failure_code"))
                                           if doc else "no report", describe_run(plane)),
               diagnosis=lambda: stop_unnoticed(plane) or (
                   "the person who asked gets a definite answer at once: report the probe in flight as stopping "
                   "rather than abandon it (SESSION-STOP-3, D17)"))
    ctx.expect(reports[0].t - t_signal <= STOP_ANSWER_S,
               expected="the report within %.1f s of the stop" % STOP_ANSWER_S,
               actual="%.2f s after it" % (reports[0].t - t_signal),
               diagnosis="a stop ends the acquisition wait at once (SESSION-STOP-2, D13): sleep on something the "
                         "signal handler wakes, never a plain timeout")
    settled = [e for e in plane.control.progress_events() if e.event_type == "source_probe_completed"]
    ctx.expect(len(settled) == 1 and (settled[0].facts or {}).get("code") == "SESSION_WORKER_STOPPING"
               and settled[0].facts.get("outcome") == "failed" and settled[0].call.t > reports[0].t,
               expected="its settled event after the report: code SESSION_WORKER_STOPPING, outcome failed",
               actual=lambda: "settled events %s" % [e.facts for e in settled],
               diagnosis="a narrated probe answered on a stop still gets its settled event, after the report: code "
                         "SESSION_WORKER_STOPPING, outcome failed (SESSION-STOP-3)")
    _expect_no_new_work(ctx, plane, t_signal)
    _expect_finished_last(ctx, plane)
    expect_summary(ctx, plane, terminal_state="service_stopped")


@check("stop.drain-bound", clauses=["SESSION-STOP-5", "SESSION-STOP-4"], level="MUST",
       title="a stop while the control plane never answers the drain: every process gone within 6 s, exit 0",
       fakes="the node is PID 1; one probe whose acquisition stays pending; every result report is accepted and "
             "never answered; SIGTERM after the first read",
       expected="heartbeats go on while the drain waits; exit 0 within STOP_GRACE_S + 1 s = 6 s of the stop; "
                "summary terminal_state service_stopped")
def _(ctx):
    # About 6 s: the contract's own grace (STOP_GRACE_S) is what is measured.
    plane = ctx.plane()
    source = plane.add_source(rows=[["a", 1]], ready_after_reads=None)
    plane.probe("source_inspect", source)
    plane.control.add_fault(faults.hang(), plane.control.report_match())
    _start(ctx, plane)
    t_signal = plane.stop_when(plane.control.started("read", 1), what="the first acquisition read")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    _expect_exit_within(ctx, plane, DRAIN_BUDGET_S + SCHEDULE_SLACK_S, t_signal, "the stop")
    ctx.expect(bool(plane.control.reports()), expected="the drain sent the probe's report",
               actual=describe_run(plane),
               diagnosis=lambda: stop_unnoticed(plane) or "a stop answers the probe in flight before anything else "
                                                          "of the drain: report it SESSION_WORKER_STOPPING at once")
    beats = [c for c in plane.control.heartbeats()
             if t_signal + DRAIN_BEATS_FROM_S <= c.t <= t_signal + DRAIN_BEATS_TO_S]
    ctx.expect(len(beats) >= MIN_DRAIN_BEATS,
               expected="heartbeats on schedule while the drain waits for its report (at least %d between %.0f s and "
                        "%.0f s after the stop)" % (MIN_DRAIN_BEATS, DRAIN_BEATS_FROM_S, DRAIN_BEATS_TO_S),
               actual="%d" % len(beats),
               diagnosis="the attempt stays alive while it drains: beats go on until the attempt_finished append "
                         "begins (SESSION-STOP-4)")
    expect_summary(ctx, plane, terminal_state="service_stopped")


@check("stop.second", clauses=["SESSION-STOP-6"], level="MUST",
       title="a second stop while the node drains ends it now, with the monitor's summary",
       fakes="the node is PID 1; one probe whose acquisition stays pending; every result report is accepted and "
             "never answered; SIGTERM after the first read, a second SIGTERM once the report has arrived",
       expected="exit 0 within 1 s of the second stop; summary service_stopped with attempt_id null and zero "
                "counts; no request after the second stop")
def _(ctx):
    plane = ctx.plane()
    source = plane.add_source(rows=[["a", 1]], ready_after_reads=None)
    plane.probe("source_inspect", source)
    plane.control.add_fault(faults.hang(), plane.control.report_match())
    _start(ctx, plane)
    plane.stop_when(plane.control.started("read", 1), what="the first acquisition read")
    t_second = plane.stop_when(plane.control.started("report", 1), what="the drain's report",
                               diagnosis=lambda: stop_unnoticed_so_far(plane))
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    _expect_exit_within(ctx, plane, STOP_BUDGET_S + SCHEDULE_SLACK_S, t_second, "the second stop")
    summary = expect_summary(ctx, plane, terminal_state="service_stopped")
    ctx.expect(summary["attempt_id"] is None and summary["probes_answered"] == 0 and summary["probes_failed"] == 0,
               expected="the monitor's summary: attempt_id null, zero counts",
               actual="attempt_id %s, answered %s, failed %s" % (summary["attempt_id"], summary["probes_answered"],
                                                                 summary["probes_failed"]),
               diagnosis="a second stop kills the capability process's group at once; the monitor writes the "
                         "summary itself (SESSION-STOP-6)")
    late = [c for c in plane.control.calls() if c.t > t_second + AFTER_SIGNAL_SLACK_S]
    ctx.expect(not late, expected="nothing sent after the second stop",
               actual=lambda: ", ".join(c.verb for c in late),
               diagnosis="a second stop ends the drain now: kill the capability process's group and send nothing "
                         "more, not even attempt_finished")


@check("stop.before-start", clauses=["SESSION-STOP-7", "SESSION-STOP-1"], level="MUST",
       title="a stop before attempt:start is answered abandons the request in flight and sends nothing more",
       fakes="the node is PID 1; variants: the metadata server, the exchange, attempt:start accepted and never "
             "answered; SIGTERM once it arrived",
       expected="exit 0 within 1 s; summary service_stopped; no request after the one held, no event")
def _(ctx):
    def act(label, verb):
        plane = ctx.plane()
        if verb == "identity":
            plane.metadata.add_fault(faults.hang(), plane.metadata.identity_match())
            arrived = plane.metadata.started()
        else:
            plane.control.add_fault(faults.hang(), getattr(plane.control, verb + "_match")())
            arrived = plane.control.started(verb, 1)
        _start(ctx, plane)
        t_signal = plane.stop_when(arrived, what="the held %s request" % label)
        plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
        _expect_exit_within(ctx, plane, STOP_BUDGET_S + SCHEDULE_SLACK_S, t_signal, "the stop (variant %s)" % label)
        expect_summary(ctx, plane, terminal_state="service_stopped", variant=label)
        late = [c for c in plane.control.calls() if c.t > t_signal]
        ctx.expect(not late, expected="no request after the stop (variant %s)" % label,
                   actual=lambda: ", ".join(c.verb for c in late),
                   diagnosis="a stop before the session started sends nothing more, no event included "
                             "(SESSION-STOP-7)")
    each_variant(ctx, [("identity", "identity"), ("exchange", "exchange"), ("attempt:start", "start")], act)
