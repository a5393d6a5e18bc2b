"""The slot looks at its runner every RUNNER_POLL_S again, without a pidfd: each assignment waits 50 ms on average after its runner has ended."""
NODE = "nodes/scan_worker.py"
REPLACE = [('self.fd = os.pidfd_open(pid)', 'self.fd = None'),
           ('exited.wait(min(RUNNER_POLL_S, max(0.0, watchdog_at - time.time())))',
            'FLOW.stopping.wait(RUNNER_POLL_S)')]
KILLS = ["runner.exit-seen"]
