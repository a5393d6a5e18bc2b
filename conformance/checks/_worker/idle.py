"""IDLE: a waiting worker costs almost no CPU (its process tree, measured from /proc)."""

import signal

from conformance.checks import check
from conformance.checks._worker.plane import WorkerPlane
from conformance.lifecycle import measure_cpu
from conformance.timeouts import SHORT_TIMEOUT_S

IDLE_SHARE_MAX = 0.02  # WORKER-IDLE-1: at most 2 % of one core while waiting
# Long enough that /proc's 10 ms ticks (two per sample at worst) stay well
# inside the budget: 2 s x 2 % = 40 ms = 4 ticks.
IDLE_WINDOW_S = 2.0


@check("idle.cpu", clauses=["WORKER-IDLE-1"], level="MUST",
       title="waiting between polls costs at most 2 % of one core",
       fakes="the plane answers polls and heartbeats with no work (0.6 s and 0.8 s, scaled)",
       expected="user + system CPU of the worker's process tree over 2 s of waiting <= 2 % of one core")
def _(ctx):
    plane = ctx.use(WorkerPlane(ctx))
    timeline = plane.timeline
    life = plane.lifecycle().start()
    ctx.expect(timeline.wait_for(1, SHORT_TIMEOUT_S, path="/poll"),  # start-up (imports, the claim) is over
               expected="a first poll within %.0f s" % SHORT_TIMEOUT_S, actual="none",
               diagnosis="claim, then poll: the worker never polled after its start")
    t0 = timeline.last(path="/poll").t_start
    use = measure_cpu(life.proc, IDLE_WINDOW_S)
    ctx.expect(use is not None, expected="the worker keeps running while it waits",
               actual=lambda: "it exited: %s" % life.wait(SHORT_TIMEOUT_S).describe(),
               diagnosis="the worker exited while it should wait between polls: with no work it keeps polling")
    ctx.note("idle: %.3f CPU-s over %.2f s = %.2f %% of a core (%d processes)"
             % (use.cpu_s, use.wall_s, 100 * use.share, use.processes))
    polls = timeline.count(path="/poll", since=t0 + 1e-9)
    ctx.expect(polls >= 2, expected="the worker polls while it waits (at least 2 polls in the window)",
               actual="%d polls" % polls,
               diagnosis="poll at the interval the plane hands out while waiting")
    ctx.expect(use.share <= IDLE_SHARE_MAX,
               expected="at most %.0f %% of one core while waiting" % (100 * IDLE_SHARE_MAX),
               actual="%.1f %% (%.3f CPU-s over %.2f s)" % (100 * use.share, use.cpu_s, use.wall_s),
               diagnosis="something spins while the worker waits: sleep in the kernel (a wait with a timeout), "
                         "never in a loop that checks the clock")
    life.stop(signal.SIGTERM, SHORT_TIMEOUT_S)
