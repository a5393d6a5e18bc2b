"""A retried generation opens a new scan window (now + the timeout) instead of keeping the first one: every crash extends the scan."""
NODE = "nodes/scan_worker.py"
REPLACE = [('return self.new_generation(state, OPERATION_EXECUTE, runner["attempt"] + 1, window)',
            'return self.new_generation(state, OPERATION_EXECUTE, runner["attempt"] + 1, None)')]
KILLS = ["runner.retries"]
