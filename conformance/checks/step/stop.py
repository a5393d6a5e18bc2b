"""Cancellation: SIGTERM/SIGINT in every phase, as PID 1; the receipt survives."""

import signal
import time

from conformance.checks import check
from conformance.checks.step._common import (
    IDENTITY, Input, MARKER_NAME, Match, RESULT_NAME, csv_inputs, expect_exit,
    expect_listed, expect_marker, expect_not_listed, expect_prompt_stop, faults, on_event, stderr_lines)

# How long a node may take to exit after the signal before the harness kills
# it: the budget is 1 s, so waiting longer only delays the verdict.
AFTER_STOP_TIMEOUT_S = 10.0

# Time given to the node to block in the phase under test after the store
# has seen it get there.
SETTLE_S = 0.2


def _requests_after(plane, t):
    return [ex for ex in plane.store.transcript if ex.t_start > t]


def _stop_in(plane, predicate, what, signum=signal.SIGTERM, settle_s=SETTLE_S):
    plane.start()
    return plane.stop_when(predicate, signum=signum, what=what, settle_s=settle_s)


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
    ctx.expect(plane.proc.is_pid1, expected="the node is PID 1", actual="it is not (harness)")
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
               actual="stderr mentions KeyboardInterrupt")


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
       fakes="the store stops reading a 48 MiB upload after 256 KiB", expected="exit 20 within 1 s")
def _(ctx):
    items = [Input("big.bin", generated=48 << 20)]
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.stall(after_bytes=256 << 10), Match(method="POST", key="*outputs/*"))
    _stop_in(plane, on_event("fault", "*outputs/*"), "the upload body", settle_s=0.5)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_prompt_stop(ctx, plane)


@check("stop.upload-answer", clauses=["STEP-STOP-2", "STEP-MARKER-5"], level="MUST",
       title="SIGTERM while awaiting an upload's answer: prompt exit, the object stays in the marker",
       fakes="the store commits the first output and never answers",
       expected="exit 20 within 1 s; the cancelled marker lists that output")
def _(ctx):
    items = csv_inputs(2)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.accept_then_hang(), Match(method="POST", key="*outputs/*", first=1))
    _stop_in(plane, on_event("commit", "*outputs/*"), "the upload's answer")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_prompt_stop(ctx, plane)
    expect_listed(ctx, plane, ["outputs/" + items[0].relpath], "inventory first: the store may have it")


@check("stop.connect", clauses=["STEP-STOP-3"], level="MUST",
       title="SIGTERM during a TCP connect that never completes ends the run at once",
       fakes="the input's get_url points at a loopback address whose connect never completes",
       expected="exit 20 within 1 s; cancelled marker")
def _(ctx):
    hole = faults.blackhole()
    try:
        plane = ctx.step_plane(inputs=[Input("x.csv", b"1\n", url=hole.url(path="/x.csv?X-Amz-Signature=CANARYhole"))])
        _stop_in(plane, on_event("done", plane.manifest_key), "the input's connect", settle_s=0.5)
        plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
        expect_prompt_stop(ctx, plane)
    finally:
        hole.close()


@check("stop.tls-handshake", clauses=["STEP-STOP-3"], level="MUST",
       title="SIGTERM during a TLS handshake that never completes ends the run at once",
       fakes="HTTPS store; the input GET's connection is accepted but the handshake never answered",
       expected="exit 20 within 1 s; cancelled marker")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1), tls=True)
    plane.store.add_fault(faults.tls_stall(), Match(skip=1, first=1))
    _stop_in(plane, on_event("fault"), "the TLS handshake", settle_s=0.5)
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_prompt_stop(ctx, plane)


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
    ctx.expect([ex.key for ex in after] == [plane.marker_key()],
               expected="only the marker POST after the signal",
               actual="; ".join("%s %s" % (ex.method, ex.key) for ex in after) or "nothing")


@check("stop.between-inputs", clauses=["STEP-RESULT-5", "STEP-MARKER-5", "STEP-STOP-4"], level="MUST",
       title="a stop between inputs: the marker lists what was copied; no result.json",
       fakes="input 2's GET is never answered; SIGTERM then",
       expected="exit 20; marker lists input 1's output only; no result.json written")
def _(ctx):
    items = csv_inputs(3)
    plane = ctx.step_plane(inputs=items)
    plane.store.add_fault(faults.hang(), Match(method="GET", key=items[1].key))
    _stop_in(plane, on_event("request", items[1].key), "input 2's GET")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    expect_prompt_stop(ctx, plane)
    expect_listed(ctx, plane, ["outputs/" + items[0].relpath], "copied before the stop")
    expect_not_listed(ctx, plane, [RESULT_NAME, "outputs/" + items[1].relpath], "never written")
    ctx.expect(not plane.posts(RESULT_NAME), expected="no result.json POST on a stop",
               actual="%d POST(s)" % len(plane.posts(RESULT_NAME)))


@check("stop.before-manifest", clauses=["STEP-MARKER-6", "STEP-STOP-2"], level="MUST",
       title="a stop before the manifest arrives still writes a receipt, identified from the environment",
       fakes="the manifest GET is never answered; SIGTERM",
       expected="exit 20; cancelled marker with the LSPO_* identity")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.hang(), Match(method="GET", key=plane.manifest_key))
    _stop_in(plane, on_event("request", plane.manifest_key), "the manifest GET")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    marker = expect_prompt_stop(ctx, plane)
    got = {k: marker.get(k) for k in IDENTITY}
    ctx.expect(got == IDENTITY, expected="identity %s" % IDENTITY, actual="%s" % got)


@check("stop.receipt-kept", clauses=["STEP-STOP-5", "STEP-MARKER-4", "STEP-MARKER-3"], level="MUST",
       title="SIGTERM (twice) during the marker write neither cuts it nor changes it",
       fakes="the store delays its answer to the marker POST by 2 s; two SIGTERMs meanwhile",
       expected="exit 0; succeeded marker stored; exactly one marker POST")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.delay(2.0), Match(method="POST", key="*/" + MARKER_NAME, phase="response"))
    _stop_in(plane, on_event("commit", "*/" + MARKER_NAME), "the marker's answer")
    time.sleep(0.3)
    plane.proc.signal(signal.SIGTERM)
    plane.wait()
    expect_exit(ctx, plane, 0, "the status was decided before the receipt; a stop cannot change it")
    expect_marker(ctx, plane, "succeeded", 0)
    ctx.expect(len(plane.marker_posts()) == 1, expected="one marker POST", actual="%d" % len(plane.marker_posts()))


@check("stop.receipt-deadline", clauses=["STEP-STOP-6"], level="MUST",
       title="the marker write gives up after 20 s even when the store dribbles its answer",
       fakes="the store commits the marker, then sends its answer one byte every 2 s",
       expected="exit within 25 s with the decided code (0); a stderr line says it gave up")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.dribble(chunk_bytes=1, interval_s=2.0),
                          Match(method="POST", key="*/" + MARKER_NAME, phase="response"))
    plane.run(timeout=60)
    ctx.expect(not plane.result.timed_out and plane.result.wall_s <= 25.0,
               expected="exit within 25 s (receipt deadline 20 s)", actual=plane.result.describe(),
               diagnosis="a socket timeout bounds silence, not duration: arm an elapsed deadline")
    expect_exit(ctx, plane, 0, "the code decided before the receipt")
    ctx.expect(any("hello-node:" in line for line in stderr_lines(plane.result)),
               expected="a stderr line about the receipt", actual="stderr: %r" % plane.result.stderr[-300:])


@check("stop.ack-line", clauses=["STEP-STOP-1", "STEP-REDACT-2"], level="MUST",
       title="a stop is acknowledged on stderr with the signal number, then a CANCELLED line",
       fakes="SIGTERM while the input GET is unanswered",
       expected="a stderr line naming signal 15; a line 'hello-node: CANCELLED: ...'")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.store.add_fault(faults.hang(), Match(method="GET", key="inputs/*"))
    _stop_in(plane, on_event("request", "inputs/*"), "the input GET")
    plane.wait(timeout=AFTER_STOP_TIMEOUT_S)
    lines = stderr_lines(plane.result)
    acks = [line for line in lines if line.startswith("hello-node: stop requested (signal 15)")]
    ctx.expect(len(acks) == 1, expected="one line 'hello-node: stop requested (signal 15); finishing up'",
               actual="%d such line(s); stderr: %r" % (len(acks), lines[:4]))
    ctx.expect(any(line.startswith("hello-node: CANCELLED:") for line in lines),
               expected="a 'hello-node: CANCELLED: <reason>' line", actual="stderr: %r" % lines[:4])


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
               expected="a non-empty error on a cancelled marker", actual="error %r" % (marker.get("error"),))
