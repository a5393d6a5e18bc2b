"""POLL and BEAT: the worker keeps the intervals the plane hands out (time scaled, the interval rule)."""

import signal

from conformance.checks import check
from conformance.checks._worker.plane import WorkerPlane
from conformance.timeouts import SHORT_TIMEOUT_S
from conformance.timescale import expect_interval

POLLS_OBSERVED = 5  # four intervals: enough for the rule's median, a check of about 3 s


@check("poll.interval", clauses=["WORKER-POLL-1", "WORKER-BEAT-1"], level="MUST",
       title="polls and heartbeats at the intervals the plane hands out",
       fakes="every answer hands out poll 6 s and heartbeat 8 s, contract time (0.6 s and 0.8 s scaled)",
       expected="GET /poll every 0.6 s and POST /heartbeat every 0.8 s, by the interval rule of "
                "conformance/timescale.py")
def _(ctx):
    plane = ctx.use(WorkerPlane(ctx))
    timeline = plane.timeline
    life = plane.lifecycle().start()
    ctx.expect(timeline.wait_for(POLLS_OBSERVED, SHORT_TIMEOUT_S, path="/poll"),
               expected="%d polls within %.0f s" % (POLLS_OBSERVED, SHORT_TIMEOUT_S),
               actual=lambda: "%d polls" % timeline.count(path="/poll"),
               diagnosis="claim, then poll at the interval the plane hands out: fewer polls came than that schedule "
                         "gives")
    result = life.stop(signal.SIGTERM, SHORT_TIMEOUT_S)
    expect_interval(ctx, timeline.intervals(method="GET", path="/poll", until=result.t_signal), plane.poll_s,
                    what="GET /poll", diagnosis="the worker does not wait the interval the plane handed out")
    expect_interval(ctx, timeline.intervals(method="POST", path="/heartbeat", until=result.t_signal),
                    plane.heartbeat_s, what="POST /heartbeat",
                    diagnosis="the heartbeat does not keep the interval the plane handed out")
