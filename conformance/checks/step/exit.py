"""Exit codes: 0, 1, 10 and 20, and nothing else."""

import signal
import time

from conformance.checks import check
from conformance.checks.step._common import (
    Match, csv_inputs, exit_diagnosis, expect_diagnostics, expect_exit, expect_marker, faults, on_event)


@check("exit.codes", clauses=["STEP-EXIT-1"], level="MUST",
       title="success, a transient and a permanent refusal, and a stop exit 0, 1, 10 and 20",
       fakes="four runs: healthy; input GET answered 503; input GET answered 404; SIGTERM while the GET hangs",
       expected="exit 0, 1, 10, 20 with markers succeeded, failed, failed, cancelled")
def _(ctx):
    # (scenario, the store's fault on the input GET, the exit code and marker status it must give, why)
    scenarios = [("success", None, 0, "succeeded", "a healthy run"),
                 ("transient refusal (503)", faults.status(503, s3_code="ServiceUnavailable"), 1, "failed",
                  "a 503 refusal is transient"),
                 ("permanent refusal (404)", faults.status(404, s3_code="NoSuchKey"), 10, "failed",
                  "a 404 refusal is permanent"),
                 ("stop (SIGTERM)", faults.hang(), 20, "cancelled", "a stop before the status is decided")]
    got, planes = [], []
    for _name, fault, _code, _status, _why in scenarios:
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
        planes.append(plane)
    want = [(code, status) for _name, _fault, code, status, _why in scenarios]

    def described():
        parts = []
        for (name, _fault, code, status, _why), (exit_code, marker) in zip(scenarios, got):
            parts.append("%s: exit %s (%s), marker %s (%s)" % (
                name, exit_code, "ok" if exit_code == code else "expected %d" % code,
                marker or "none", "ok" if marker == status else "expected %s" % status))
        return "; ".join(parts)

    def diagnose():
        for (name, _fault, code, status, why), (exit_code, marker), plane in zip(scenarios, got, planes):
            if exit_code != code:
                return "%s: %s" % (name, exit_diagnosis(plane, (code,), why))
            if marker != status:
                return "%s: %s" % (name, "the run wrote no marker: every run that can identify itself ends "
                                         "with its receipt" if marker is None else
                                   "the marker's status follows the exit code: %s for %d" % (status, code))
        return "the four runs disagree with the contract's failure map"
    ctx.expect(got == want, expected="%s" % want, actual=described, diagnosis=diagnose)


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
