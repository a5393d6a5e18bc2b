"""Drain and stop: handlers as PID 1, a first SIGTERM that drains (no new claim, the work in hand
finished, exit 0), a second SIGTERM or SIGINT that stops within 3 s whatever the server does, a
bounded drain, and no runner outliving a stop (SCAN-STOP-1 to SCAN-STOP-4).

A container runtime sends SIGTERM, waits its grace period, then SIGKILLs. As PID 1 a signal
without a handler is ignored, so a worker without one is killed at the end of every grace
period, mid-upload. A drain that takes new work never ends; a stop that waits on a hung server
is a SIGKILL later; a runner left alive scans for nobody and holds the slot's identity.
"""

import signal

from conformance.checks import check
from conformance.checks.scan._common import (DRAINING_LINE, RUN_TIMEOUT_S, SCHEDULE_SLACK_S, STOPPING_LINE,
                                             describe_run, each_variant, faults, stop_unnoticed)

# SCAN-STOP-2: an idle worker exits this soon after the first SIGTERM.
IDLE_DRAIN_S = 1.0
# SCAN-STOP-3: a stop exits this soon after its signal, whatever the server does.
STOP_S = 3.0
# stop.idle: how long the harness waits for the exit before it kills the worker (a worker that
# ignores SIGTERM as PID 1 is judged in seconds, not at RUN_TIMEOUT_S).
IDLE_EXIT_WAIT_S = IDLE_DRAIN_S + 2 * SCHEDULE_SLACK_S + 1.0
# How long the harness waits for a stop's exit before killing the worker.
STOP_EXIT_WAIT_S = STOP_S + 2 * SCHEDULE_SLACK_S + 1.0
# How long a slow target's GET is held back: the scan is under way at the signal and ends by itself.
SLOW_TARGET_S = 1.5
# stop.runner: the target is held back longer than any stop takes, so the runner is alive at it.
STUCK_TARGET_S = 20.0
# stop.signals and stop.drain-bound: an http timeout and a drain far longer than a stop, so a worker
# that waits for the held upload instead of cutting it is seen late.
LONG_HTTP_TIMEOUT_S = 30
LONG_DRAIN_S = 30
# stop.drain-bound: the --drain-seconds it passes (the contract's floor).
SHORT_DRAIN_S = 1
# The marker of a runner process on its command line (SCAN-RUNNER-1's argv).
RUNNER_ARGV = "_assignment_runner"
EXIT_OK, EXIT_STOPPED = 0, 2


def _store_get_arrived(plane):
    return lambda: any(e.fake == "store" for e in plane.timeline.entries())


def _latency(result, nth_signal=-1):
    """Seconds from the nth signal sent to the exit (None when unknown)."""
    if result.t_exit is None or not result.signals:
        return None
    return result.t_exit - result.signals[nth_signal][0]


@check("stop.idle", clauses=["SCAN-STOP-1", "SCAN-STOP-2"], level="MUST",
       title="as PID 1, an idle worker drains on SIGTERM: 'worker: draining', exit 0 within 1 s, no claim after",
       fakes="no work (every claim answered 204); the worker is PID 1 of its own PID namespace",
       expected="after SIGTERM: 'worker: draining' printed, exit 0 within 1 s (plus the scheduling slack), "
                "no claim sent after the signal")
def _(ctx):
    # Arrange
    ctx.require_pid1()
    plane = ctx.plane()
    life = plane.start()
    plane.wait_ready()
    plane.wait_claims(1)
    # Act
    result = life.stop(signal.SIGTERM, IDLE_EXIT_WAIT_S)
    # Assert
    ctx.expect(result.is_pid1, expected="the worker ran as PID 1", actual="it did not",
               diagnosis="the harness could not run the worker as PID 1 here, which is not the worker's fault: "
                         "rerun where PID namespaces are allowed")
    latency = _latency(result, 0)
    ctx.expect(not result.timed_out and result.exit_code == EXIT_OK,
               expected="exit 0 after SIGTERM", actual="%s" % result.describe(),
               diagnosis=lambda: stop_unnoticed(result) or (
                   "the first SIGTERM drains: an idle worker has nothing to finish, so it exits 0 (EXIT_OK), not %s"
                   % result.exit_code if not result.timed_out else
                   "the drain began ('%s') but the worker never ended: wake every slot's wait when the drain "
                   "begins" % DRAINING_LINE))
    ctx.expect(latency is not None and latency <= IDLE_DRAIN_S + SCHEDULE_SLACK_S,
               expected="exit within %.1f s of SIGTERM (+%.1f s slack)" % (IDLE_DRAIN_S, SCHEDULE_SLACK_S),
               actual="%.2f s" % (latency or -1), diagnosis="an idle slot's wait is woken by the drain")
    ctx.expect("worker: draining" in result.stdout.splitlines(), expected="the line 'worker: draining'",
               actual="stdout %r" % result.stdout[-300:],
               diagnosis="print the line 'worker: draining' on stdout when the first SIGTERM arrives, so the "
                         "operator's log says why the worker ends")
    late = plane.server.claims(since=result.signals[0][0])
    ctx.expect(not late, expected="no claim after the SIGTERM", actual="%d claim(s)" % len(late),
               diagnosis="a drain starts no new claim")


@check("stop.drain", clauses=["SCAN-STOP-2"], level="MUST",
       title="a SIGTERM during a scan finishes that assignment, claims nothing more and exits 0",
       fakes="two assignments queued; the first one's target GET is held back %.0f s so the scan is under way "
             "at the SIGTERM" % SLOW_TARGET_S,
       expected="the first assignment's bundle uploaded and accepted; no claim after the signal (the second "
                "assignment never granted); exit 0")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    slow = plane.add_target("slow.txt", b"alpha = 1\n")
    plane.store.add_fault(faults.delay(SLOW_TARGET_S), plane.target_match(slow))
    first = plane.add_assignment(targets=[slow])
    second = plane.add_assignment()
    life = plane.start()
    plane.wait_for(_store_get_arrived(plane), "the runner's GET of the slow target")
    # Act
    life.signal(signal.SIGTERM)
    result = life.wait(RUN_TIMEOUT_S)
    # Assert
    ctx.expect(result.exit_code == EXIT_OK, expected="exit 0 once the work in hand is done",
               actual=result.describe(),
               diagnosis=lambda: stop_unnoticed(result) or ("the first SIGTERM drains; only a drain bound or a "
                                                             "second signal makes it a stop"))
    ctx.expect(first.resolution == "bundle_accepted", expected="the assignment in hand finished and uploaded",
               actual=lambda: describe_run(plane), diagnosis="a drain finishes the scan, uploads and waits for "
                                                             "the receipt")
    late = plane.server.claims(since=result.signals[0][0])
    ctx.expect(not late and second.doc is None,
               expected="no claim after the SIGTERM; the second assignment never granted",
               actual="%d claim(s) after it; second granted: %s" % (len(late), second.doc is not None),
               diagnosis="no slot starts a new claim in a drain")


def _held_upload(plane):
    """Hold the first upload unanswered; the worker's argv waits long for anything it does not cut."""
    res = plane.add_assignment()
    plane.server.add_fault(faults.hang(), plane.server.bundle_match(res, first=1))
    life = plane.start(http_timeout_s=LONG_HTTP_TIMEOUT_S, drain_s=LONG_DRAIN_S)
    plane.wait_calls("bundle", 1, reservation=res, answered=False)
    return res, life


SIGNALS = [
    ("sigterm-twice", (signal.SIGTERM, signal.SIGTERM)),
    ("sigint", (signal.SIGINT,)),
    ("sigterm-then-sigint", (signal.SIGTERM, signal.SIGINT)),
]


@check("stop.signals", clauses=["SCAN-STOP-3"], level="MUST",
       title="a second SIGTERM, or SIGINT, stops within 3 s with an upload hung; the restart finishes it",
       fakes="the first upload is held unanswered (http timeout and drain bound 30 s); the worker gets SIGTERM "
             "then SIGTERM, or SIGINT, or SIGTERM then SIGINT; then a restart (uploads answered)",
       expected="'worker: stopping' and exit 2 within 3 s of the stopping signal; slot-0.json still bundle_ready; "
                "the restarted worker uploads the same bundle, accepted")
def _(ctx):
    def act(label, signums):
        # Arrange
        plane = ctx.plane()
        res, life = _held_upload(plane)
        # Act
        for signum in signums[:-1]:
            life.signal(signum)
            plane.wait_for(lambda: "worker: draining" in life.proc.stdout_text(), "the drain line",
                           diagnosis="no '%s' line after the first SIGTERM, so most likely no handler ran: install "
                                     "SIGTERM and SIGINT handlers before the first request (as PID 1 the kernel "
                                     "drops a signal without one), and print the line when the drain begins"
                                     % DRAINING_LINE)
        life.signal(signums[-1])
        result = life.wait(STOP_EXIT_WAIT_S)
        state = plane.slot_state(0)
        plane.restart()
        plane.wait_resolved(res)
        plane.stop()
        # Assert
        latency = _latency(result, -1)
        ctx.expect(not result.timed_out and result.exit_code == EXIT_STOPPED and latency is not None
                   and latency <= STOP_S + SCHEDULE_SLACK_S,
                   expected="exit 2 within %.1f s (+%.1f s slack) of the stopping signal (variant %s)"
                            % (STOP_S, SCHEDULE_SLACK_S, label),
                   actual="%s, %.2f s after it" % (result.describe(), latency if latency is not None else -1),
                   diagnosis=lambda: stop_unnoticed(result, signum=signums[-1]) or (
                       "a stop closes every request in flight and exits without waiting for the server"))
        ctx.expect("worker: stopping" in result.stdout.splitlines(),
                   expected="the line 'worker: stopping' (variant %s)" % label, actual=repr(result.stdout[-300:]),
                   diagnosis="print the line '%s' on stdout when a second SIGTERM or a SIGINT makes the drain a "
                             "stop" % STOPPING_LINE)
        ctx.expect(state is not None and state.get("phase") == "bundle_ready",
                   expected="slot-0.json still bundle_ready after the stop (variant %s)" % label,
                   actual="%r" % ((state or {}).get("phase"),),
                   diagnosis="a stop cuts the upload but leaves the slot's state as it was: bundle_ready, so the "
                             "restart uploads the same bundle")
        ctx.expect(res.resolution == "bundle_accepted" and len(set(p.digest_header for p in res.puts)) == 1,
                   expected="the restart uploads the same bundle, accepted (variant %s)" % label,
                   actual=lambda: describe_run(plane),
                   diagnosis="on restart, resume a bundle_ready slot by uploading the bundle it holds, byte for "
                             "byte, not a new scan")

    each_variant(ctx, SIGNALS, act)


@check("stop.everything-hung", clauses=["SCAN-STOP-3"], level="MUST",
       title="with every request of the server hung, SIGINT still ends the worker within 3 s",
       fakes="every claim, status, progress, report and upload held unanswered (http timeout 30 s); SIGINT "
             "once the first claim is held",
       expected="exit 2 within 3 s of SIGINT (+ the scheduling slack)")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    for match in (plane.server.claim_match(), plane.server.status_match(), plane.server.progress_match(),
                  plane.server.terminal_match(), plane.server.bundle_match()):
        plane.server.add_fault(faults.hang(), match)
    life = plane.start(http_timeout_s=LONG_HTTP_TIMEOUT_S, drain_s=LONG_DRAIN_S)
    plane.wait_calls("claim", 1, answered=False)
    # Act
    result = life.stop(signal.SIGINT, STOP_EXIT_WAIT_S)
    # Assert
    latency = _latency(result, 0)
    ctx.expect(not result.timed_out and result.exit_code == EXIT_STOPPED and latency is not None
               and latency <= STOP_S + SCHEDULE_SLACK_S,
               expected="exit 2 within %.1f s (+%.1f s slack) of SIGINT" % (STOP_S, SCHEDULE_SLACK_S),
               actual="%s, %.2f s after it" % (result.describe(), latency if latency is not None else -1),
               diagnosis=lambda: stop_unnoticed(result) or (
                   "a stop shuts down every socket in flight and joins its threads for at most 2.5 s"))


def _is_runner(seen):
    return any(any(RUNNER_ARGV in part for part in argv) for argv in seen.argvs)


@check("stop.runner", clauses=["SCAN-STOP-4"], level="MUST",
       title="a stop kills the running runner and records it fenced; the restart retries the generation",
       fakes="the worker runs without a PID namespace (a runner would survive it); the target's GET is held "
             "%.0f s so the runner is alive at SIGINT; then a restart with the target served" % STUCK_TARGET_S,
       expected="exit 2; no runner process alive after the exit; slot-0.json's runner status fenced; the "
                "restart scans again and uploads")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    stuck = plane.add_target("stuck.txt", b"alpha = 1\n")
    plane.store.add_fault(faults.delay(STUCK_TARGET_S), plane.target_match(stuck, first=1))
    res = plane.add_assignment(targets=[stuck])
    life = plane.start(pid1=False)
    plane.wait_for(_store_get_arrived(plane), "the runner's GET of the target")
    # Act
    result = life.stop(signal.SIGINT, STOP_EXIT_WAIT_S)
    watch = plane.worker.watch_of(life)  # every process of its tree as sampled while it ran
    runners = [seen for seen in watch.processes() if _is_runner(seen)]
    alive = [seen.pid for seen in watch.leftovers(grace_s=0.0) if _is_runner(seen)]
    state = plane.slot_state(0)
    watch.kill_leftovers()  # the harness's own cleanup; the verdict is below
    plane.restart()
    plane.wait_resolved(res)
    plane.stop()
    # Assert
    ctx.expect(result.exit_code == EXIT_STOPPED, expected="exit 2 after SIGINT", actual=result.describe(),
               diagnosis=lambda: stop_unnoticed(result) or (
                   "SIGINT is a stop: close what is in flight, kill the runners and exit 2 (EXIT_STOPPED)"))
    ctx.expect(bool(runners), expected="a runner was running at the signal", actual="no runner seen",
               diagnosis="the check needs a runner alive at the stop")
    ctx.expect(not alive, expected="no runner alive after the worker's exit",
               actual="runner pid(s) %s still running" % alive,
               diagnosis="on a stop, SIGKILL each runner's process group after checking its identity")
    runner = (state or {}).get("runner") or {}
    ctx.expect(runner.get("status") == "fenced", expected="slot-0.json's runner record status fenced after the stop",
               actual="phase %r, runner status %r" % ((state or {}).get("phase"), runner.get("status")),
               diagnosis="persist the fenced record before the worker exits")
    ctx.expect(res.resolution == "bundle_accepted", expected="the restart retries the scan and uploads",
               actual=lambda: describe_run(plane),
               diagnosis="on restart, a fenced runner record means the generation is retried: scan again and "
                         "upload")


@check("stop.drain-bound", clauses=["SCAN-STOP-2"], level="MUST",
       title="a drain that outlasts --drain-seconds becomes a stop: exit 2",
       fakes="--drain-seconds 1; the first upload held unanswered (http timeout 30 s); SIGTERM once it is held",
       expected="'worker: stopping' and exit 2 within 1 s + 3 s (+ the scheduling slack) of the SIGTERM; "
                "slot-0.json still bundle_ready")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    plane.server.add_fault(faults.hang(), plane.server.bundle_match(res, first=1))
    life = plane.start(http_timeout_s=LONG_HTTP_TIMEOUT_S, drain_s=SHORT_DRAIN_S)
    plane.wait_calls("bundle", 1, reservation=res, answered=False)
    # Act
    result = life.stop(signal.SIGTERM, SHORT_DRAIN_S + STOP_EXIT_WAIT_S)
    # Assert
    latency = _latency(result, 0)
    ctx.expect(not result.timed_out and result.exit_code == EXIT_STOPPED and latency is not None
               and latency <= SHORT_DRAIN_S + STOP_S + SCHEDULE_SLACK_S,
               expected="exit 2 within %.1f s of SIGTERM (the drain bound, then a stop)" % (
                   SHORT_DRAIN_S + STOP_S + SCHEDULE_SLACK_S),
               actual="%s, %.2f s after it" % (result.describe(), latency if latency is not None else -1),
               diagnosis=lambda: stop_unnoticed(result) or (
                   "when --drain-seconds pass first, the drain becomes a stop and exits 2"))
    state = plane.slot_state(0)
    ctx.expect(state is not None and state.get("phase") == "bundle_ready",
               expected="slot-0.json still bundle_ready", actual="%r" % ((state or {}).get("phase"),),
               diagnosis="a stop at the drain bound cuts the upload but leaves the slot bundle_ready for the "
                         "restart")


# stop.final-flush: each progress answer is held back this long, so events are still queued when
# the drain ends the slots' work (a pass of the outbox is bounded by 2 s: more than one pass is left).
SLOW_PROGRESS_S = 0.4
# SCAN-STOP-2: the flush after a drain takes at most this long.
PROGRESS_FINAL_DRAIN_S = 5.0


@check("stop.final-flush", clauses=["SCAN-STOP-2", "SCAN-PROGRESS-3"], level="MUST",
       title="after a drain, the progress still queued is flushed before exit 0, the cursor at the last event",
       fakes="every progress answer held back %.1f s; SIGTERM as soon as the assignment is accepted, with "
             "events still queued" % SLOW_PROGRESS_S,
       expected="exit 0 within 5 s (+ the scheduling slack) of the SIGTERM; every journalled event with a "
                "reservation POSTed; the cursor at the last journalled event")
def _(ctx):
    # Arrange
    plane = ctx.plane()
    res = plane.add_assignment()
    plane.server.add_fault(faults.delay(SLOW_PROGRESS_S), plane.server.progress_match())
    life = plane.start()
    plane.wait_resolved(res)
    # Act
    result = life.stop(signal.SIGTERM, PROGRESS_FINAL_DRAIN_S + STOP_EXIT_WAIT_S)
    # Assert
    latency = _latency(result, 0)
    ctx.expect(result.exit_code == EXIT_OK and latency is not None
               and latency <= PROGRESS_FINAL_DRAIN_S + SCHEDULE_SLACK_S,
               expected="exit 0 within %.1f s of SIGTERM" % (PROGRESS_FINAL_DRAIN_S + SCHEDULE_SLACK_S),
               actual="%s, %.2f s after it" % (result.describe(), latency if latency is not None else -1),
               diagnosis=lambda: stop_unnoticed(result) or (
                   "after a drain, flush the progress journal for at most PROGRESS_FINAL_DRAIN_S, then exit 0"))
    journal = plane.journal()
    wanted = [e.get("sequence") for e in journal if e.get("reservation_id") is not None]
    sent = set(c.doc.get("sequence") for c in plane.server.calls("progress") if isinstance(c.doc, dict))
    missing = [n for n in wanted if n not in sent]
    ctx.expect(not missing, expected="every event with a reservation delivered by the drain's flush",
               actual="%d of %d never sent (sequences %s)" % (len(missing), len(wanted), missing[:10]),
               diagnosis="after the slots retire, flush the journal for up to PROGRESS_FINAL_DRAIN_S; only a "
                         "stop cuts the flush")
    cursor = plane.read_json("progress-cursor.json")
    last = journal[-1].get("sequence") if journal else None
    ctx.expect(cursor == {"schema": 1, "sequence": last},
               expected="progress-cursor.json = {schema: 1, sequence: %s}, the last journalled event" % last,
               actual="%r" % (cursor,), diagnosis="the flush skips the events without a reservation too")
