"""Cancellation: SIGTERM/SIGINT in every phase, as PID 1; the receipt survives."""

import re
import signal
import time

from conformance.checks import check
from conformance.checks.step._common import (
    IDENTITY, KEY_PREFIX, Input, MARKER_NAME, Match, RESULT_NAME, csv_inputs, data_upload, expect_diagnostics,
    expect_exit, expect_listed, expect_marker, expect_not_listed, expect_prompt_stop, faults, on_data_event,
    on_event, stderr_lines, stop_unnoticed, SLOW_STOP_IN_CONNECT)

# The receipt deadline (STEP-STOP-6) and how much earlier than it the node's
# last line may come on a loaded machine and still count as "when it passed".
RECEIPT_DEADLINE_S = 20.0
RECEIPT_LINE_SLACK_S = 3.0

# How long a node may take to exit after the signal before the harness kills
# it: the budget is 1 s, so waiting longer only delays the verdict.
AFTER_STOP_TIMEOUT_S = 10.0

# Time given to the node to block in the phase under test after the store
# has seen it get there.
SETTLE_S = 0.2

# How long the store holds its answer to the marker while a check signals the
# node: time for the signal and the node's reaction, short of any deadline.
RECEIPT_HOLD_S = 2.0


def _requests_after(plane, t):
    return [ex for ex in plane.store.transcript if ex.t_start > t]


def _stop_in(plane, predicate, what, signum=signal.SIGTERM, settle_s=SETTLE_S, own_upload=False):
    plane.start()
    return plane.stop_when(predicate, signum=signum, what=what, settle_s=settle_s, own_upload=own_upload)


@check("stop.first-byte", clauses=["STEP-STOP-2", "STEP-STOP-1"], level="MUST",
       title="SIGTERM while waiting for an input's first byte ends the run at once",
       fakes="the store accepts the input GET and never answers",
       expected="exit 20 within 1 s; cancelled marker")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.hang(), Match(method="GET", key="inputs/*"))
    _stop_in(plane, on_event("request", "inputs/*"), "the input GET's first byte")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_prompt_stop(ctx, plane)


@check("stop.pid1", clauses=["STEP-STOP-1"], level="MUST",
       title="as PID 1, SIGTERM is handled (the kernel drops it otherwise)",
       fakes="the node runs as init of a new PID namespace; the input GET is never answered",
       expected="exit 20 within 1 s; cancelled marker")
def _(ctx):
    ctx.require_pid1()
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.hang(), Match(method="GET", key="inputs/*"))
    plane.start(pid1="require")
    ctx.expect(plane.proc.is_pid1, expected="the node is PID 1", actual="it is not (harness)",
               diagnosis="the harness could not run the node as PID 1 here, which is not the node's fault: "
                         "rerun where PID namespaces are allowed")
    plane.store.wait_for(on_event("request", "inputs/*"), 30)
    time.sleep(SETTLE_S)
    plane.proc.signal(signal.SIGTERM)
    plane.wait(timeout=15)
    expect_prompt_stop(ctx, plane)


@check("stop.sigint", clauses=["STEP-STOP-1"], level="MUST",
       title="SIGINT is handled exactly like SIGTERM",
       fakes="the store never answers the input GET; SIGINT", expected="exit 20 within 1 s; no traceback")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.hang(), Match(method="GET", key="inputs/*"))
    _stop_in(plane, on_event("request", "inputs/*"), "the input GET", signum=signal.SIGINT)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_prompt_stop(ctx, plane)
    ctx.expect("KeyboardInterrupt" not in plane.result.stderr, expected="no KeyboardInterrupt",
               actual="stderr mentions KeyboardInterrupt",
               diagnosis="handle SIGINT with the same handler as SIGTERM, so Python's default KeyboardInterrupt "
                         "never reaches the code")


@check("stop.mid-body", clauses=["STEP-STOP-2", "STEP-EXIT-2"], level="MUST",
       title="SIGTERM mid-body ends the download at once, and the run is cancelled, not failed",
       fakes="the store sends 1 MiB of an 8 MiB input, then stalls",
       expected="exit 20 within 1 s; marker cancelled (not a size/hash failure)")
def _(ctx):
    items = [Input("big.bin", generated=8 << 20)]
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.stall(after_bytes=1 << 20), Match(method="GET", key="inputs/*"))
    _stop_in(plane, on_event("fault", "inputs/*"), "mid-body of the input")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_prompt_stop(ctx, plane)


@check("stop.upload-body", clauses=["STEP-STOP-2"], level="MUST",
       title="SIGTERM while the upload body is being sent ends the upload at once",
       fakes="the store stops reading the node's first 48 MiB upload of its own after 256 KiB",
       expected="exit 20 within 1 s")
def _(ctx):
    items = [Input("big.bin", generated=48 << 20)]
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.stall(after_bytes=256 << 10), data_upload())
    _stop_in(plane, on_data_event("fault"), "the upload body", settle_s=0.5, own_upload=True)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_prompt_stop(ctx, plane)


@check("stop.upload-answer", clauses=["STEP-STOP-2", "STEP-MARKER-5"], level="MUST",
       title="SIGTERM while awaiting an upload's answer: prompt exit, the object stays in the marker",
       fakes="the store commits the node's first object of its own and never answers",
       expected="exit 20 within 1 s; the cancelled marker lists that object")
def _(ctx):
    items = csv_inputs(2)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.accept_then_hang(), data_upload(first=1))
    _stop_in(plane, on_data_event("commit"), "the upload's answer", own_upload=True)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_prompt_stop(ctx, plane)
    held = plane.collector.data_posts()[:1]
    ctx.expect(held, expected="the held upload", actual="no upload of the node's own objects",
               diagnosis="the node uploaded none of its own objects, so there was no upload to stop: publish "
                         "what the work makes under the staging prefix")
    expect_listed(ctx, plane, [held[0].key[len(KEY_PREFIX):]], "inventory first: the store may have it")


@check("stop.connect", clauses=["STEP-STOP-3"], level="MUST",
       title="SIGTERM during a TCP connect that never completes ends the run at once",
       fakes="the input's get_url points at a loopback address whose connect never completes",
       expected="exit 20 within 1 s (STEP-STOP-2's bound, not the 10 s connect deadline); cancelled marker")
def _(ctx):
    hole = faults.blackhole()
    try:
        plane = ctx.step_plane(inputs=[Input("x.csv", b"1\n", url=hole.url(path="/x.csv?X-Amz-Signature=CANARYhole"))])
        _stop_in(plane, on_event("done", plane.job.manifest_key), "the input's connect", settle_s=0.5)
        plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
        expect_prompt_stop(ctx, plane, diagnosis=SLOW_STOP_IN_CONNECT)
    finally:
        hole.close()


@check("stop.tls-handshake", clauses=["STEP-STOP-3"], level="MUST",
       title="SIGTERM during a TLS handshake that never completes ends the run at once",
       fakes="HTTPS store; the input GET's connection is accepted but the handshake never answered",
       expected="exit 20 within 1 s (STEP-STOP-2's bound, not the 10 s connect deadline); cancelled marker")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), tls=True)
    plane.store.add_fault(faults.tls_stall(), Match(skip=1, first=1))
    _stop_in(plane, on_event("fault"), "the TLS handshake", settle_s=0.5)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_prompt_stop(ctx, plane, diagnosis=SLOW_STOP_IN_CONNECT)


@check("stop.connect-deadline", clauses=["STEP-STOP-3", "STEP-HTTP-3"], level="MUST",
       title="a connect that never completes is given up after 10 s (one elapsed deadline)",
       fakes="the input's get_url points at a loopback address whose connect never completes; no signal",
       expected="exit 1 between 9 and 14 s; failed marker")
def _(ctx):
    hole = faults.blackhole()
    try:
        plane = ctx.step_plane(inputs=[Input("x.csv", b"1\n", url=hole.url(path="/x.csv"))])
        plane.run(timeout=40)
        expect_exit(ctx, plane, 1, "a connect deadline is transient")
        ctx.expect(plane.result.wall_s <= 14.0, expected="exit within 14 s (deadline 10 s)",
                   actual="%.1f s" % plane.result.wall_s,
                   diagnosis="socket timeouts apply per address and per phase; bound the whole connect")
        expect_marker(ctx, plane, "failed", 1)
    finally:
        hole.close()


@check("stop.only-marker-after", clauses=["STEP-STOP-4", "STEP-RESULT-5"], level="MUST",
       title="after a stop, the only request is the marker",
       fakes="three inputs; the store stalls the first mid-body; SIGTERM",
       expected="after the signal: exactly one request, the marker POST")
def _(ctx):
    items = [Input("big.bin", generated=4 << 20)] + csv_inputs(2)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.stall(after_bytes=1 << 20), Match(method="GET", key=items[0].key))
    t_signal = _stop_in(plane, on_event("fault", items[0].key), "mid-body of input 1")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    after = _requests_after(plane, t_signal)
    ctx.expect([ex.key for ex in after] == [plane.collector.marker_key()],
               expected="only the marker POST after the signal",
               actual="; ".join("%s %s" % (ex.method, ex.key) for ex in after) or "nothing",
               diagnosis=lambda: stop_unnoticed(plane) or (
                   "after a stop the marker is still owed: write it, even with the transfer in flight cut short"
                   if not after else "look at the stop flag before starting any request: after a stop only the "
                   "marker may go out, no further GET, output, result.json or retry"))


@check("stop.between-inputs", clauses=["STEP-RESULT-5", "STEP-MARKER-5", "STEP-STOP-4"], level="MUST",
       title="a stop between inputs: a cancelled marker listing what was stored; no result.json",
       fakes="input 2's GET is never answered; SIGTERM then",
       expected="exit 20; a cancelled marker (listing, by the invariants, every object stored); no result.json")
def _(ctx):
    items = csv_inputs(3)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.hang(), Match(method="GET", key=items[1].key))
    _stop_in(plane, on_event("request", items[1].key), "input 2's GET")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_prompt_stop(ctx, plane)
    expect_not_listed(ctx, plane, [RESULT_NAME], "never written after a stop")
    ctx.expect(not plane.collector.posts(RESULT_NAME), expected="no result.json POST on a stop",
               actual="%d POST(s)" % len(plane.collector.posts(RESULT_NAME)),
               diagnosis="a stopped run writes no result.json, not even the failure path's: only the marker "
                         "after a stop")


@check("stop.before-manifest", clauses=["STEP-MARKER-6", "STEP-STOP-2"], level="MUST",
       title="a stop before the manifest arrives still writes a receipt, identified from the environment",
       fakes="the manifest GET is never answered; SIGTERM",
       expected="exit 20; cancelled marker with the LSPO_* identity")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.hang(), Match(method="GET", key=plane.job.manifest_key))
    _stop_in(plane, on_event("request", plane.job.manifest_key), "the manifest GET")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    marker = expect_prompt_stop(ctx, plane)
    got = {k: marker.get(k) for k in IDENTITY}
    ctx.expect(got == IDENTITY, expected="identity %s" % IDENTITY, actual="%s" % got,
               diagnosis="with no manifest yet, take the marker's identity from the LSPO_* environment "
                         "variables, as STEP-MANIFEST-4 says")


@check("stop.receipt-kept", clauses=["STEP-STOP-5", "STEP-MARKER-4", "STEP-MARKER-3"], level="MUST",
       title="SIGTERM (twice) during the marker write neither cuts it nor changes it",
       fakes="the store delays its answer to the marker POST by 2 s; two SIGTERMs meanwhile",
       expected="exit 0; succeeded marker stored; exactly one marker POST")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.delay(RECEIPT_HOLD_S), Match(method="POST", key="*/" + MARKER_NAME,
                                                              phase="response"))
    _stop_in(plane, on_event("commit", "*/" + MARKER_NAME), "the marker's answer")
    time.sleep(0.3)
    plane.proc.signal(signal.SIGTERM)
    plane.wait()
    expect_exit(ctx, plane, 0, "the status was decided before the receipt; a stop cannot change it")
    expect_marker(ctx, plane, "succeeded", 0)
    posts = plane.collector.marker_posts()
    ctx.expect(len(posts) == 1, expected="one marker POST", actual="%d" % len(posts),
               diagnosis="once the marker write has begun a stop changes nothing: do not cut it, rewrite it or "
                         "send a second one")


@check("stop.receipt-deadline", clauses=["STEP-STOP-6"], level="MUST",
       title="the marker write gives up after 20 s even when the store dribbles its answer",
       fakes="the store commits the marker, then sends its answer one byte every 2 s",
       expected="exit within 25 s with the decided code (0); a stderr line when the deadline passed")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.dribble(chunk_bytes=1, interval_s=2.0),
                          Match(method="POST", key="*/" + MARKER_NAME, phase="response"))
    plane.run(timeout=60)
    ctx.expect(not plane.result.timed_out and plane.result.wall_s <= 25.0,
               expected="exit within 25 s (receipt deadline 20 s)", actual=plane.result.describe(),
               diagnosis="a socket timeout bounds silence, not duration: arm an elapsed deadline")
    expect_exit(ctx, plane, 0, "the code decided before the receipt")
    expect_diagnostics(ctx, plane, why="the node says it gave up on the marker")
    began = plane.collector.marker_posts()[0].t_start if plane.collector.marker_posts() else None
    late = [line for t, line in plane.result.stderr_lines
            if began is not None and t >= began + RECEIPT_DEADLINE_S - RECEIPT_LINE_SLACK_S]
    ctx.expect(late, expected="a stderr line printed when the 20 s deadline passed",
               actual="last lines: %r" % stderr_lines(plane.result)[-2:],
               diagnosis="say on stderr that the marker was given up, so the log explains the missing receipt")


_NAMES_SIGTERM = re.compile(r"\b(15|SIGTERM)\b")


@check("stop.ack-line", clauses=["STEP-STOP-1", "STEP-REDACT-2"], level="MUST",
       title="a stop is acknowledged on stderr with the signal number, and the run reported cancelled",
       fakes="SIGTERM while the input GET is unanswered; then SIGTERM while the marker's answer is delayed "
             "(only the signal handler can speak then)",
       expected="prefixed lines naming signal 15 and saying the run was cancelled; in the second run a line "
                "naming signal 15 although the run succeeds")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.hang(), Match(method="GET", key="inputs/*"))
    _stop_in(plane, on_event("request", "inputs/*"), "the input GET")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_diagnostics(ctx, plane, why="a stopped run")
    lines = stderr_lines(plane.result)
    named = [i for i, line in enumerate(lines) if _NAMES_SIGTERM.search(line)]
    ctx.expect(named, expected="a stderr line naming signal 15", actual="stderr: %r" % lines[:4],
               diagnosis=lambda: stop_unnoticed(plane) or "acknowledge the stop from the handler, naming the "
                                                          "signal")
    ctx.expect(any("cancel" in line.lower() for line in lines[named[0]:]),
               expected="a line saying the run was cancelled", actual="stderr: %r" % lines[:4],
               diagnosis="the log's last word on a stopped run says it was cancelled, not failed")

    # A stop during the marker write changes nothing the run reports, so a
    # line naming the signal there can only be the handler's acknowledgement.
    ctx.note("variant: SIGTERM while the marker's answer is delayed")
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.delay(RECEIPT_HOLD_S), Match(method="POST", key="*/" + MARKER_NAME,
                                                              phase="response"))
    _stop_in(plane, on_event("commit", "*/" + MARKER_NAME), "the marker's answer")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S + RECEIPT_HOLD_S)
    expect_exit(ctx, plane, 0, "the receipt was under way: the stop changes nothing")
    lines = stderr_lines(plane.result)
    ctx.expect(any(_NAMES_SIGTERM.search(line) for line in lines),
               expected="a stderr line naming signal 15", actual="stderr: %r" % lines[-4:],
               diagnosis="the handler acknowledges every stop on stderr, even one that changes nothing")


@check("stop.after-work", clauses=["STEP-MARKER-7", "STEP-EXIT-2"], level="MUST",
       title="a stop while result.json is answered gives a cancelled marker with an error (D9)",
       fakes="the store delays its answer to result.json by 2 s; SIGTERM meanwhile",
       expected="exit 20; cancelled marker with a non-empty error")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.delay(2.0), Match(method="POST", key="*/" + RESULT_NAME, phase="response"))
    _stop_in(plane, on_event("commit", "*/" + RESULT_NAME), "result.json's answer")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    marker = expect_prompt_stop(ctx, plane)
    ctx.expect(isinstance(marker.get("error"), str) and marker["error"].strip(),
               expected="a non-empty error on a cancelled marker", actual="error %r" % (marker.get("error"),),
               diagnosis="a cancelled marker says why, even when the stop came after the work was done: that the "
                         "run was stopped on request and how the interrupted operation ended")
