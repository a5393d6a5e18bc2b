"""Lives of a long-lived node: crash points, restarts, no leftovers, idle cost (conformance/lifecycle.py)."""

import json
import os
import sys
import time
import unittest

from conformance import faults, runner
from conformance.checks import PASS, Check, NodeSpec, run_check
from conformance.checks._worker.plane import WorkerPlane
from conformance.clauses import REPO_ROOT
from conformance.lifecycle import after, answered, held, line, measure_cpu, tree_cpu_s, when
from conformance.timeouts import POLL_INTERVAL_S, REAP_TIMEOUT_S, SHORT_TIMEOUT_S

WORKER = NodeSpec.from_path(os.path.join(REPO_ROOT, "conformance", "tests", "data", "toy_worker.py"))

# A node with a child, a grandchild, and (DAEMON) a great-grandchild that
# leaves the session and is orphaned (a daemon): what a crash must not leave.
FAMILY = r"""
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; "
                          "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); time.sleep(600)"])
if DAEMON and os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(600)
    os._exit(0)
if DAEMON:
    os.wait()
while len(open("/proc/%d/task/%d/children" % (child.pid, child.pid)).read().split()) < 1:
    time.sleep(0.01)
print("ready", flush=True)
time.sleep(600)
"""


def alive(pids, wait=True):
    """The pids still running (not gone, not a zombie), after the kernel had
    REAP_TIMEOUT_S to finish killing them (outside a namespace SIGKILL to a
    tree is one signal per process, each dying on its own time)."""
    deadline = time.monotonic() + REAP_TIMEOUT_S
    while True:
        running = []
        for pid in pids:
            try:
                with open("/proc/%d/stat" % pid) as handle:
                    if handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                        running.append(pid)
            except (OSError, IndexError):
                pass
        if not running or not wait or time.monotonic() > deadline:
            return running
        time.sleep(POLL_INTERVAL_S)


def run(fn, node=WORKER):
    """Run fn(ctx, seen) as a check; returns (CheckResult, seen)."""
    seen = {}
    check = Check("t.lifecycle", "_worker", "T", ["WORKER-STATE-1"], "MUST", "lifecycle test", "", "",
                  lambda ctx: fn(ctx, seen))
    return run_check(check, node), seen


class CrashPointTest(unittest.TestCase):
    def assertPassed(self, result):
        self.assertEqual(result.verdict, PASS, "\n".join([str(result.reason), str(result.actual)] + result.transcript))

    def test_held_unprocessed_then_restart_on_the_same_state(self):
        def fn(ctx, seen):
            plane = ctx.use(WorkerPlane(ctx))
            lives = plane.lifecycle()
            trigger = held(plane.server, "POST", "/claim")
            first = lives.start(kill_at=trigger)
            seen["first"] = first.wait(SHORT_TIMEOUT_S)
            seen["fired"], seen["granted_at_kill"] = first.fired, dict(plane.granted)
            seen["held"] = trigger.exchange
            seen["disk"] = first.state_files
            with_env = dict(lives.env)
            second = lives.restart(kill_at=line(lambda text: text.startswith("claimed"), what="'claimed'"))
            seen["second"] = second.wait(SHORT_TIMEOUT_S)
            seen["second_fired"], seen["env_same"] = second.fired, lives.env == with_env
            seen["lives"] = [(life.index, life.t_kill is not None) for life in lives.lives]
            seen["marks"] = [mark.label for mark in plane.timeline.marks]
            seen["granted"] = dict(plane.granted)
        result, seen = run(fn)
        self.assertPassed(result)
        self.assertTrue(seen["fired"])
        self.assertEqual(seen["granted_at_kill"], {})                 # not processed: the fake did nothing
        self.assertEqual(seen["first"].exit_code, -9)
        self.assertEqual(seen["first"].leftover, [])
        self.assertEqual(seen["held"].outcome, "held")                # released (closed) after the kill
        self.assertEqual(list(json.loads(seen["disk"]["state.json"])), ["request_id"])
        self.assertTrue(seen["second_fired"] and seen["env_same"])
        self.assertEqual(list(seen["granted"]), [json.loads(seen["disk"]["state.json"])["request_id"]])
        self.assertEqual(seen["lives"], [(1, True), (2, True)])
        self.assertEqual(seen["marks"][0].split(" (")[0], "life 1 started")
        self.assertTrue(seen["marks"][1].startswith("life 1: SIGKILL while toy-plane holds the POST /claim "
                                                    "unanswered (not processed)"), seen["marks"])

    def test_held_processed_answered_when_after(self):
        def fn(ctx, seen):
            plane = ctx.use(WorkerPlane(ctx))
            lives = plane.lifecycle()
            first = lives.start(kill_at=held(plane.server, "POST", "/claim", processed=True))
            first.wait(SHORT_TIMEOUT_S)
            seen["granted"] = dict(plane.granted)                     # processed: granted, answer withheld
            trigger = answered(plane.server, "GET", "/poll", nth=2)
            second = lives.restart(kill_at=trigger)
            second.wait(SHORT_TIMEOUT_S)
            seen["answered"] = (second.fired, trigger.exchange, second.t_kill)
            seen["polls_before_kill"] = plane.timeline.count(path="/poll", until=second.t_kill)
            third = lives.restart(kill_at=when(lambda: plane.timeline.count(path="/heartbeat") >= 1, "a heartbeat"))
            third.wait(SHORT_TIMEOUT_S)
            seen["when"] = third.fired
            armed = time.monotonic()
            fourth = lives.restart(kill_at=after(0.2))
            fourth.wait(SHORT_TIMEOUT_S)
            seen["after"] = (fourth.fired, fourth.t_kill - armed)
            seen["results"] = [r.exit_code for r in lives.results]
        result, seen = run(fn)
        self.assertPassed(result)
        self.assertEqual(len(seen["granted"]), 1)
        fired, exchange, t_kill = seen["answered"]
        self.assertTrue(fired)
        self.assertEqual((exchange.method, exchange.path, exchange.status), ("GET", "/poll", 200))
        self.assertLessEqual(exchange.t_end, t_kill)
        self.assertGreaterEqual(seen["polls_before_kill"], 2)
        self.assertTrue(seen["when"])
        self.assertTrue(seen["after"][0])
        self.assertGreaterEqual(seen["after"][1], 0.2)
        self.assertEqual(seen["results"], [-9, -9, -9, -9])

    def test_a_trigger_that_never_fires_and_misuse(self):
        def fn(ctx, seen):
            plane = ctx.use(WorkerPlane(ctx))
            plane.server.add_fault(faults.status(500))
            lives = plane.lifecycle()
            life = lives.start(kill_at=answered(plane.server, "GET", "/poll"))  # the claim fails: exit 1
            seen["result"] = life.wait(SHORT_TIMEOUT_S)
            seen["fired"] = life.fired
            try:
                lives.start()
            except RuntimeError as exc:
                seen["start_twice"] = str(exc)
            running = lives.restart()
            try:
                lives.restart()
            except RuntimeError as exc:
                seen["restart_running"] = str(exc)
            running.kill()
        result, seen = run(fn)
        self.assertPassed(result)
        self.assertEqual((seen["result"].exit_code, seen["fired"]), (1, False))
        self.assertIn("restart()", seen["start_twice"])
        self.assertIn("while life 2 is running", seen["restart_running"])


class NoLeftoverTest(unittest.TestCase):
    def family(self, pid1, daemon):
        def fn(ctx, seen):
            from conformance.lifecycle import Lifecycle
            lives = Lifecycle(ctx, {"PATH": "/usr/bin:/bin"}, pid1=pid1)
            life = lives.start()
            seen["ready"] = life.proc.wait_for_line("stdout", lambda text: text == "ready", SHORT_TIMEOUT_S)
            seen["pids"] = runner.descendants(life.proc.host_pid)
            seen["is_pid1"] = life.proc.is_pid1
            seen["result"] = life.kill()
            seen["alive_at_reap"] = alive(seen["pids"], wait=False)
            seen["alive"] = alive(seen["pids"])
        return run(fn, NodeSpec.from_command([sys.executable, "-c", "DAEMON = %r\n" % daemon + FAMILY]))

    def test_sigkill_of_pid1_ends_the_whole_namespace(self):
        if not runner.capabilities().pid1:
            self.skipTest(runner.capabilities().pid1.reason)
        result, seen = self.family(pid1="require", daemon=True)
        self.assertEqual(result.verdict, PASS, result.transcript)  # the no-process-left invariant held
        self.assertTrue(seen["ready"] and seen["is_pid1"])
        self.assertGreaterEqual(len(seen["pids"]), 3)             # child, grandchild, the orphaned daemon
        self.assertEqual(seen["alive_at_reap"], [])                # gone by the time the node is reaped
        self.assertEqual((seen["result"].exit_code, seen["result"].leftover, seen["result"].killed), (-9, [], False))

    def test_without_a_namespace_the_tree_is_killed(self):
        # Not the daemon: outside a PID namespace an orphan that left the
        # session is nobody's descendant, and the runner cannot find it.
        result, seen = self.family(pid1=False, daemon=False)
        self.assertEqual(result.verdict, PASS, result.transcript)
        self.assertTrue(seen["ready"])
        self.assertFalse(seen["is_pid1"])
        self.assertEqual(len(seen["pids"]), 2)
        self.assertEqual(seen["alive"], [])
        self.assertEqual(seen["result"].exit_code, -9)


class CpuTest(unittest.TestCase):
    WINDOW_S = 0.5

    def measure(self, code):
        proc = runner.Runner.start([sys.executable, "-c", code], {"PATH": "/usr/bin:/bin"}, pid1=False)
        try:
            self.assertTrue(proc.wait_for_line("stdout", lambda text: text == "go", SHORT_TIMEOUT_S))
            return measure_cpu(proc, self.WINDOW_S)
        finally:
            proc.kill()
            proc.wait(SHORT_TIMEOUT_S)

    def test_idle_busy_and_a_busy_child(self):
        idle = self.measure("import time; print('go', flush=True); time.sleep(60)")
        busy = self.measure("print('go', flush=True)\nwhile True: pass")
        child = self.measure("import subprocess, sys, time\n"
                             "subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
                             "time.sleep(0.2); print('go', flush=True); time.sleep(60)")
        self.assertLess(idle.share, 0.05, idle)
        self.assertGreater(busy.share, 0.2, busy)      # a busy core, on a machine shared with other work
        self.assertGreater(child.share, 0.2, child)    # the tree, not only the node
        self.assertEqual((idle.processes, child.processes), (1, 2))
        self.assertGreaterEqual(busy.wall_s, self.WINDOW_S)

    def test_gone_is_none(self):
        proc = runner.Runner.start([sys.executable, "-c", "pass"], {"PATH": "/usr/bin:/bin"}, pid1=False)
        proc.wait(SHORT_TIMEOUT_S)
        self.assertIsNone(tree_cpu_s(proc.host_pid))
        self.assertIsNone(measure_cpu(proc, 0.01))


if __name__ == "__main__":
    unittest.main()
