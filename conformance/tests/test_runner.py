"""Runner: real subprocesses, as PID 1 and under a memory cgroup where allowed."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

from conformance import runner
from conformance.clauses import REPO_ROOT
from conformance.runner import CapabilityUnavailable, Runner, capabilities
from conformance.timeouts import SHORT_TIMEOUT_S

ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
PY = sys.executable

# Toy nodes. Each prints "ready" once its signal disposition is in place.
HANDLES_TERM = """
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *a: sys.exit(20))
print("ready", flush=True)
time.sleep(30)
"""
IGNORES_TERM = """
import time
print("ready", flush=True)
time.sleep(30)
"""


def py(code, *args):
    return [PY, "-c", code] + list(args)


def marker_alive(marker):
    """True when a process with marker in its argv is alive (not a zombie)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        argv = runner.read_cmdline(int(name))
        if argv and any(marker in part for part in argv):
            try:
                with open("/proc/%s/stat" % name) as handle:
                    state = handle.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                return True
    return False


def require_pid1(test):
    caps = capabilities()
    if not caps.pid1:
        test.skipTest("PID namespace unavailable: %s" % caps.pid1.reason)


class CapabilitiesTest(unittest.TestCase):
    def test_detected_once_with_reasons(self):
        first, second = capabilities(), capabilities()
        self.assertIs(first, second)
        self.assertIsInstance(first.pid1.reason, str)
        self.assertIsInstance(first.cgroup.reason, str)
        self.assertIn(first.cgroup.value, ("v1", "v2", None))
        value, reason = first.pid1  # unpacks like a pair
        self.assertEqual(bool(first.pid1), bool(value))


class PlainRunTest(unittest.TestCase):
    def test_exit_code_output_and_measures(self):
        code = ("import sys; print('out', flush=True); print('err', file=sys.stderr);"
                "sys.stdout.buffer.write(b'\\xff\\xfe bin\\n'); sys.exit(3)")
        result = Runner.start(py(code), ENV, pid1=False).wait(SHORT_TIMEOUT_S)
        self.assertEqual(result.exit_code, 3)
        self.assertEqual([line for _t, line in result.stdout_lines], ["out", "\ufffd\ufffd bin"])
        self.assertEqual(result.stderr, "err\n")
        self.assertFalse(result.timed_out)
        self.assertGreater(result.maxrss_bytes, 1 << 20)
        self.assertGreaterEqual(result.cpu_s, 0.0)
        self.assertGreater(result.wall_s, 0.0)
        self.assertIsNone(result.stop_latency_s)
        stamps = [t for t, _line in result.stdout_lines]
        self.assertEqual(stamps, sorted(stamps))

    def test_environment_is_exactly_the_one_given_and_argv_is_snapshotted(self):
        marker = "m-%s" % uuid.uuid4().hex
        env = dict(ENV, SECRET_LOOKING="x")
        proc = Runner.start(py("import time; time.sleep(0.2)", marker), env, pid1=False)
        result = proc.wait(SHORT_TIMEOUT_S)
        self.assertEqual(result.environ_snapshot, env)
        self.assertIn(marker, result.cmdline_snapshot)
        self.assertIn(marker, result.seen_cmdlines[result.host_pid])

    def test_descendant_argv_is_sampled(self):
        marker = "child-%s" % uuid.uuid4().hex
        code = "import subprocess; subprocess.run(['sh', '-c', 'sleep 0.3', %r])" % marker
        result = Runner.start(py(code), ENV, pid1=False).wait(SHORT_TIMEOUT_S)
        self.assertTrue(any(marker in argv for argv in result.seen_cmdlines.values()), result.seen_cmdlines)

    def test_death_by_signal_is_negative(self):
        proc = Runner.start(py(IGNORES_TERM), ENV, pid1=False)
        self.assertTrue(proc.wait_for_line("stdout", lambda line: line == "ready", SHORT_TIMEOUT_S))
        self.assertTrue(proc.signal(signal.SIGTERM))
        result = proc.wait(SHORT_TIMEOUT_S)
        self.assertEqual(result.exit_code, -signal.SIGTERM)
        self.assertIsNotNone(result.stop_latency_s)
        self.assertLess(result.stop_latency_s, SHORT_TIMEOUT_S)
        self.assertEqual(result.t_signal, result.signals[0][0])
        self.assertFalse(proc.signal(signal.SIGTERM))  # already reaped

    def test_wait_for_line(self):
        proc = Runner.start(py("import time; print('a', flush=True); time.sleep(0.2); print('b', flush=True)"),
                            ENV, pid1=False)
        self.assertTrue(proc.wait_for_line("stdout", lambda line: line == "b", SHORT_TIMEOUT_S))
        self.assertFalse(proc.wait_for_line("stdout", lambda line: line == "a", SHORT_TIMEOUT_S, since=1))
        self.assertFalse(proc.wait_for_line("stderr", lambda line: True, SHORT_TIMEOUT_S))  # stream ended
        proc.wait(SHORT_TIMEOUT_S)
        slow = Runner.start(py(IGNORES_TERM), ENV, pid1=False)
        started = time.monotonic()
        self.assertFalse(slow.wait_for_line("stdout", lambda line: line == "never", 0.2))
        self.assertLess(time.monotonic() - started, SHORT_TIMEOUT_S)
        slow.kill()
        self.assertTrue(slow.wait(SHORT_TIMEOUT_S).killed)

    def test_timeout_kills_the_tree_and_keeps_logs(self):
        marker = "grandchild-%s" % uuid.uuid4().hex
        code = ("import subprocess, sys, time; subprocess.Popen(['sh', '-c', 'sleep 60', %r]);"
                "print('before', flush=True); print('oops', file=sys.stderr, flush=True); time.sleep(60)" % marker)
        proc = Runner.start(py(code), ENV, pid1=False)
        self.assertTrue(proc.wait_for_line("stdout", lambda line: line == "before", SHORT_TIMEOUT_S))
        result = proc.wait(0.3)
        self.assertTrue(result.timed_out)
        self.assertTrue(result.killed)
        self.assertEqual(result.exit_code, -signal.SIGKILL)
        self.assertEqual(result.stdout, "before\n")
        self.assertEqual(result.stderr, "oops\n")
        self.assertEqual(result.leftover, [])  # killed by the harness, not left by the node
        self.assertFalse(marker_alive(marker))

    def test_processes_left_behind_are_listed_and_killed(self):
        marker = "orphan-%s" % uuid.uuid4().hex
        code = "import subprocess; subprocess.Popen(['sh', '-c', 'sleep 60', %r]); print('bye')" % marker
        result = Runner.start(py(code), ENV, pid1=False).wait(SHORT_TIMEOUT_S)
        self.assertEqual(result.exit_code, 0)
        self.assertTrue(any(marker in (argv or []) for _pid, argv in result.leftover), result.leftover)
        self.assertFalse(marker_alive(marker))

    def test_reap_all_leaves_no_process(self):
        marker = "reap-%s" % uuid.uuid4().hex
        procs = [Runner.start(py(IGNORES_TERM, marker), ENV, pid1=pid1) for pid1 in (False, True)]
        for proc in procs:
            self.assertTrue(proc.wait_for_line("stdout", lambda line: line == "ready", SHORT_TIMEOUT_S))
        self.assertTrue(marker_alive(marker))
        self.assertGreaterEqual(runner.reap_all(), 2)
        for proc in procs:
            self.assertFalse(proc.running())
            self.assertTrue(proc.result.killed)
        self.assertFalse(marker_alive(marker))
        self.assertNotIn(procs[0], runner.live_processes())

    def test_node_does_not_outlive_a_killed_harness(self):
        marker = "orphaned-node-%s" % uuid.uuid4().hex
        for pid1 in (False, True):
            harness = subprocess.Popen(
                [PY, "-c", "import sys, time\nfrom conformance.runner import Runner\n"
                           "p = Runner.start(['sleep', '60', %r], {'PATH': '/usr/bin:/bin'}, pid1=%r)\n"
                           "print(p.host_pid, flush=True)\ntime.sleep(60)\n" % (marker, pid1)],
                cwd=REPO_ROOT, stdout=subprocess.PIPE)
            self.assertTrue(harness.stdout.readline().strip().isdigit())
            self.assertTrue(marker_alive(marker))
            harness.kill()  # SIGKILL: no atexit, no cleanup in the harness
            harness.wait()
            harness.stdout.close()
            deadline = time.monotonic() + SHORT_TIMEOUT_S
            while marker_alive(marker) and time.monotonic() < deadline:
                time.sleep(0.01)
            self.assertFalse(marker_alive(marker), "pid1=%r" % pid1)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            Runner.start(["true"], ENV, pid1="maybe")
        with self.assertRaises(runner.HarnessError):
            Runner.start(["/nonexistent/node-%s" % uuid.uuid4().hex], ENV, pid1=False)


class Pid1Test(unittest.TestCase):
    def setUp(self):
        require_pid1(self)

    def test_node_is_pid1_with_its_own_proc(self):
        code = "import os; print(os.getpid()); print(open('/proc/1/cmdline','rb').read().split(b'\\0')[2].decode())"
        proc = Runner.start(py(code, "x"), ENV, pid1=True)
        self.assertTrue(proc.is_pid1)
        result = proc.wait(SHORT_TIMEOUT_S)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(result.stdout.split("\n")[0], "1")
        self.assertEqual(result.stdout.split("\n")[1], code)  # /proc is the namespace's own
        self.assertNotEqual(proc.host_pid, 1)
        self.assertTrue(result.is_pid1)

    def test_sigterm_without_handler_is_ignored_as_pid1(self):
        """The kernel drops a signal from outside the namespace when PID 1 has no handler."""
        proc = Runner.start(py(IGNORES_TERM), ENV, pid1=True)
        self.assertTrue(proc.wait_for_line("stdout", lambda line: line == "ready", SHORT_TIMEOUT_S))
        proc.signal(signal.SIGTERM)
        result = proc.wait(0.5)
        self.assertTrue(result.timed_out, "a PID 1 without a handler must survive SIGTERM")
        self.assertEqual(result.exit_code, -signal.SIGKILL)
        self.assertGreaterEqual(result.stop_latency_s, 0.5)

    def test_sigterm_with_handler_ends_pid1(self):
        proc = Runner.start(py(HANDLES_TERM), ENV, pid1=True)
        self.assertTrue(proc.wait_for_line("stdout", lambda line: line == "ready", SHORT_TIMEOUT_S))
        proc.signal(signal.SIGTERM)
        result = proc.wait(SHORT_TIMEOUT_S)
        self.assertFalse(result.timed_out)
        self.assertEqual(result.exit_code, 20)
        self.assertLess(result.stop_latency_s, SHORT_TIMEOUT_S)

    def test_exit_code_normalised_like_a_plain_child(self):
        """Death by SIGKILL reads -9 as PID 1 too (unshare(1) would have exited 1)."""
        outcomes = []
        for pid1 in (True, False):
            proc = Runner.start(py(IGNORES_TERM), ENV, pid1=pid1)
            self.assertTrue(proc.wait_for_line("stdout", lambda line: line == "ready", SHORT_TIMEOUT_S))
            proc.signal(signal.SIGKILL)
            result = proc.wait(SHORT_TIMEOUT_S)
            self.assertFalse(result.timed_out)
            outcomes.append(result.exit_code)
        self.assertEqual(outcomes, [-signal.SIGKILL, -signal.SIGKILL])

    def test_pid1_namespace_takes_its_descendants_along(self):
        marker = "ns-child-%s" % uuid.uuid4().hex
        code = "import subprocess; subprocess.Popen(['sh', '-c', 'sleep 60', %r]); print('bye')" % marker
        result = Runner.start(py(code), ENV, pid1=True).wait(SHORT_TIMEOUT_S)
        self.assertEqual(result.exit_code, 0)
        self.assertEqual(result.leftover, [])  # the kernel ended them with the namespace
        self.assertFalse(marker_alive(marker))


class MemoryCgroupTest(unittest.TestCase):
    def setUp(self):
        caps = capabilities()
        if not caps.cgroup:
            self.skipTest("memory cgroup unavailable: %s" % caps.cgroup.reason)
        self.parent = caps.cgroup_parent

    def leftover_cgroups(self):
        prefix = "conformance-%d-" % os.getpid()
        return [n for n in os.listdir(self.parent) if n.startswith(prefix)]

    def test_oom_kill_under_limit(self):
        for pid1 in (True, False):
            proc = Runner.start(py("data = b'x' * (200 << 20); print('survived')"), ENV, pid1=pid1,
                                memory_limit_bytes=64 << 20)
            result = proc.wait(SHORT_TIMEOUT_S)
            self.assertTrue(result.oom_killed, result)
            self.assertEqual(result.exit_code, -signal.SIGKILL)
            self.assertNotIn("survived", result.stdout)
            self.assertLessEqual(result.memory_peak_bytes, 64 << 20)
            self.assertEqual(result.memory_limit_bytes, 64 << 20)
        self.assertEqual(self.leftover_cgroups(), [])

    def test_fits_under_limit(self):
        result = Runner.start(py("data = b'x' * (16 << 20); print('ok')"), ENV, pid1=False,
                              memory_limit_bytes=128 << 20).wait(SHORT_TIMEOUT_S)
        self.assertFalse(result.oom_killed)
        self.assertEqual(result.exit_code, 0)
        self.assertGreaterEqual(result.memory_peak_bytes, 16 << 20)
        self.assertGreaterEqual(result.maxrss_bytes, 16 << 20)
        self.assertEqual(self.leftover_cgroups(), [])


def running(pid):
    """Alive and not a zombie (an orphan's zombie waits for whoever reaps here)."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def parent_of(pid):
    with open("/proc/%d/stat" % pid) as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


class ForkServerTest(unittest.TestCase):
    """Launchers are forks of the fork server; the old way is the fallback."""

    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix="fork-server-test-")
        self.addCleanup(shutil.rmtree, self.scratch, True)

    def test_the_nodes_cpu_is_counted(self):
        before = runner.forked_nodes_cpu_s()
        proc = Runner.start(py("import time\nend = time.process_time() + 0.3\n"
                               "while time.process_time() < end: pass\n"), ENV, pid1=False)
        result = proc.wait(SHORT_TIMEOUT_S)
        self.assertIsNone(proc._popen)
        self.assertGreaterEqual(result.cpu_s, 0.3)
        self.assertGreaterEqual(runner.forked_nodes_cpu_s() - before, 0.25)  # clock ticks: 10 ms steps

    def run_one(self, env):
        # The node waits for a file the test makes once it has looked at the
        # launcher, so the launcher is there to be looked at however slow the machine.
        go = os.path.join(self.scratch, "go")
        code = ("import os, time\nprint('up', flush=True)\n"
                "while not os.path.exists(%r): time.sleep(0.01)\n" % go)
        proc = Runner.start(py(code), env, pid1=False)
        self.assertTrue(proc.wait_for_line("stdout", lambda line: line == "up", SHORT_TIMEOUT_S))
        launcher_parent = parent_of(proc.launcher_pid)
        open(go, "w").close()
        result = proc.wait(SHORT_TIMEOUT_S)
        os.unlink(go)
        self.assertEqual((result.exit_code, result.stdout, result.environ_snapshot), (0, "up\n", env))
        self.assertEqual(result.leftover, [])
        return proc, launcher_parent

    def test_launchers_are_forks_and_a_large_request_goes_the_old_way(self):
        proc, parent = self.run_one(ENV)
        self.assertIsNone(proc._popen)
        self.assertEqual(parent, runner._fork_server._proc.pid)
        large = dict(ENV, BIG="x" * (runner.MAX_FORK_REQUEST_BYTES + 1))
        proc, parent = self.run_one(large)
        self.assertIsNotNone(proc._popen)
        self.assertEqual(parent, os.getpid())

    def test_a_dead_fork_server_is_replaced(self):
        self.run_one(ENV)
        dead = runner._fork_server._proc
        dead.kill()
        dead.wait()
        proc, parent = self.run_one(ENV)  # this one notices, and goes the old way
        self.assertIsNotNone(proc._popen)
        proc, parent = self.run_one(ENV)  # and this one has a new fork server
        self.assertIsNone(proc._popen)
        self.assertNotEqual(runner._fork_server._proc.pid, dead.pid)
        self.assertEqual(parent, runner._fork_server._proc.pid)

    def test_the_fork_server_ends_with_the_harness(self):
        harness = subprocess.Popen(
            [PY, "-c", "import time\nfrom conformance import runner\n"
                       "runner.Runner.start(['true'], {'PATH': '/usr/bin:/bin'}, pid1=False).wait(5)\n"
                       "print(runner._fork_server._proc.pid, flush=True)\ntime.sleep(60)\n"],
            cwd=REPO_ROOT, stdout=subprocess.PIPE)
        server = int(harness.stdout.readline())
        self.assertEqual(parent_of(server), harness.pid)
        harness.kill()  # SIGKILL: no atexit; only the closed socket tells the fork server
        harness.wait()
        harness.stdout.close()
        deadline = time.monotonic() + SHORT_TIMEOUT_S
        while running(server) and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertFalse(running(server))


class UnavailableTest(unittest.TestCase):
    def test_memory_limit_without_cgroup_raises(self):
        saved = runner._caps
        try:
            runner._caps = runner.Capabilities(runner.Capability(False, "test: no pid ns"),
                                               runner.Capability(None, "test: no cgroup"), None)
            with self.assertRaises(CapabilityUnavailable) as raised:
                Runner.start(["true"], ENV, memory_limit_bytes=1 << 20)
            self.assertIn("test: no cgroup", raised.exception.reason)
            with self.assertRaises(CapabilityUnavailable):
                Runner.start(["true"], ENV, pid1="require")
            proc = Runner.start(["true"], ENV, pid1=True)  # falls back
            self.assertFalse(proc.is_pid1)
            self.assertEqual(proc.wait(SHORT_TIMEOUT_S).exit_code, 0)
        finally:
            runner._caps = saved


if __name__ == "__main__":
    unittest.main()
