"""Exit codes: 0, 1, 10 and 20, and nothing else."""

import signal
import time

from conformance.checks import check
from conformance.checks.step._common import (
    Match, csv_inputs, expect_diagnostics, expect_exit, faults, on_event)


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
       title="an unexpected command-line argument is permanent (10), not an argparse 2",
       fakes="the node is started with an extra argument --frobnicate",
       expected="exit 10; no traceback; no request")
def _(ctx):
    plane = ctx.step_plane(inputs=csv_inputs(1))
    plane.start(args=("--frobnicate",))
    plane.wait()
    expect_exit(ctx, plane, 10, "a bad invocation no retry can fix")
    ctx.expect(not plane.store.transcript, expected="no request", actual=plane.describe_exchanges())
    expect_diagnostics(ctx, plane, why="saying the argument is not understood")
