"""Exit codes: 0, 1, 10 and 20, and nothing else."""

import signal
import time

from conformance.checks import check
from conformance.checks.step._common import (
    Match, csv_inputs, expect_diagnostics, expect_exit, expect_marker, faults, on_event)


@check("exit.codes", clauses=["STEP-EXIT-1"], level="MUST",
       title="success, a transient and a permanent refusal, and a stop exit 0, 1, 10 and 20",
       fakes="four runs: healthy; input GET answered 503; input GET answered 404; SIGTERM while the GET hangs",
       expected="exit 0, 1, 10, 20 with markers succeeded, failed, failed, cancelled")
def _(ctx):
    got = []
    for fault in (None, faults.status(503, s3_code="ServiceUnavailable"), faults.status(404, s3_code="NoSuchKey"),
                  faults.hang()):
        plane = ctx.step_plane(inputs=csv_inputs(1))
        if fault is not None:
            plane.store.add_fault(fault, Match(method="GET", key="inputs/*"))
        plane.start()
        if fault is not None and fault.kind == "hang":
            plane.store.wait_for(on_event("request", "inputs/*"), 30)
            time.sleep(0.2)
            plane.proc.signal(signal.SIGTERM)
        plane.wait()
        got.append((plane.result.exit_code, (plane.marker or {}).get("status")))
    want = [(0, "succeeded"), (1, "failed"), (10, "failed"), (20, "cancelled")]
    ctx.expect(got == want, expected="%s" % want, actual="%s" % got)


@check("exit.unexpected-argument", clauses=["STEP-EXIT-1", "STEP-REDACT-2"], level="MUST",
       title="unknown command-line arguments are ignored: the run goes on as without them (D35)",
       fakes="the node is started with the arguments --help --frobnicate --token=<canary> (--help, not alone, "
             "is one more unknown argument)",
       expected="exit 0; a succeeded marker; the canary argument never printed; no traceback")
def _(ctx):
    canary = "CANARYargv" + "7" * 12
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.start(args=("--help", "--frobnicate", "--token=" + canary))
    plane.wait()
    expect_exit(ctx, plane, 0, "an argument the node does not use changes nothing")
    expect_marker(ctx, plane, "succeeded", 0)
    out = plane.result.stdout + plane.result.stderr
    ctx.expect(canary not in out, expected="the arguments' values never printed (one may carry a secret)",
               actual="the canary argument appears in %s" % ("stderr" if canary in plane.result.stderr else "stdout"),
               diagnosis="say at most how many arguments are ignored, never what they are")
    if plane.result.stderr_lines:
        expect_diagnostics(ctx, plane, why="a note that the arguments are ignored, if any")
