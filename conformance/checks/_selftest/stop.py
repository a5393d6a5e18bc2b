"""STOP: SIGTERM ends a waiting run, also as PID 1."""

import signal

from conformance.checks import check
from conformance.checks._selftest.plane import ToyPlane
from conformance.timeouts import SHORT_TIMEOUT_S

STOP_LIMIT_S = 1.0  # SELFTEST-STOP-1: exit within 1 s of SIGTERM


@check("stop.sigterm-pid1", clauses=["SELFTEST-STOP-1"], level="MUST",
       title="SIGTERM as PID 1 ends the run with exit 20 within 1 s",
       fakes="TOY_WAIT=1: the node waits for a signal", expected="exit 20 within 1 s of SIGTERM")
def _(ctx):
    ctx.require_pid1()
    plane = ctx.use(ToyPlane(ctx))
    proc = plane.start(pid1="require", TOY_WAIT="1")
    ctx.expect(proc.wait_for_line("stdout", lambda line: line == "waiting", SHORT_TIMEOUT_S),
               expected="a stdout line 'waiting'", actual=lambda: "stdout %r" % proc.stdout_text()[-200:],
               diagnosis="with TOY_WAIT set, print 'waiting' on stdout (flushed) before waiting for the signal")
    proc.signal(signal.SIGTERM)
    result = proc.wait(2 * STOP_LIMIT_S)  # past the limit the run is killed: the check fails anyway
    ctx.note("after SIGTERM: " + result.describe())
    ctx.expect(not result.timed_out, expected="exit within %.1f s of SIGTERM" % STOP_LIMIT_S,
               actual="still running %.1f s after SIGTERM (killed)" % (2 * STOP_LIMIT_S),
               diagnosis="as PID 1 a signal without a handler is ignored: install a SIGTERM handler")
    ctx.expect(result.exit_code == 20 and result.stop_latency_s <= STOP_LIMIT_S,
               expected="exit 20 within %.1f s" % STOP_LIMIT_S,
               actual="exit %s after %.3f s" % (result.exit_code, result.stop_latency_s),
               diagnosis="a SIGTERM ends the run with exit 20 within 1 s")
