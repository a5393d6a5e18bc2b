"""STOP: SIGTERM ends the work, judged on the timeline of requests around the signal."""

import collections
import signal

from conformance.checks import check
from conformance.checks._worker.plane import WorkerPlane
from conformance.timeouts import SHORT_TIMEOUT_S

STOP_LIMIT_S = 1.0  # WORKER-STOP-1: exit within 1 s of SIGTERM


@check("stop.sigterm", clauses=["WORKER-STOP-1"], level="MUST",
       title="SIGTERM stops polling and heartbeating, exit 0 within 1 s",
       fakes="the plane grants a claim and answers polls and heartbeats (0.6 s and 0.8 s, scaled)",
       expected="before SIGTERM: polls and a heartbeat; after it: at most the one request per path already "
                "on its way, none after the exit; exit 0 within 1 s")
def _(ctx):
    plane = ctx.use(WorkerPlane(ctx))                                          # Arrange
    timeline = plane.timeline
    life = plane.lifecycle().start()
    working = (timeline.wait_for(2, SHORT_TIMEOUT_S, path="/poll")
               and timeline.wait_for(1, SHORT_TIMEOUT_S, path="/heartbeat"))
    ctx.expect(working, expected="two polls and a heartbeat within %.0f s of the start" % SHORT_TIMEOUT_S,
               actual=lambda: "%d polls, %d heartbeats" % (timeline.count(path="/poll"),
                                                           timeline.count(path="/heartbeat")),
               diagnosis="claim, then poll and heartbeat: the worker was not working before the signal")
    result = life.stop(signal.SIGTERM, 2 * STOP_LIMIT_S)                        # Act
    later = timeline.requests(since=result.t_signal)                            # Assert: during the stop
    per_path = collections.Counter("%s %s" % (entry.method, entry.path) for entry in later)
    ctx.expect(all(n <= 1 for n in per_path.values()),
               expected="after SIGTERM at most one request per path (one already on its way), then none",
               actual=lambda: "after SIGTERM: %s" % ", ".join("%d x %s" % (n, p) for p, n in sorted(per_path.items())),
               diagnosis="the worker kept polling or heartbeating after SIGTERM: check the stop flag before every "
                         "request and wake every wait when it is set")
    ctx.expect(not result.timed_out, expected="exit within %.1f s of SIGTERM" % STOP_LIMIT_S,
               actual="still running %.1f s after SIGTERM (killed)" % (2 * STOP_LIMIT_S),
               diagnosis="as PID 1 a signal without a handler is ignored: install a SIGTERM handler")
    ctx.expect(result.exit_code == 0 and result.stop_latency_s <= STOP_LIMIT_S,
               expected="exit 0 within %.1f s" % STOP_LIMIT_S,
               actual="exit %s after %.3f s" % (result.exit_code, result.stop_latency_s),
               diagnosis="a SIGTERM is a clean exit: exit 0 within 1 s")
    after_exit = timeline.requests(since=result.t_exit)                        # after the exit
    ctx.expect(not after_exit, expected="no request after the node exited",
               actual=lambda: "%d requests, the first %s %s" % (len(after_exit), after_exit[0].method,
                                                                after_exit[0].path),
               diagnosis="a process the worker started outlived it")
