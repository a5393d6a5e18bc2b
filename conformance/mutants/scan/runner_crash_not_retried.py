"""A runner that crashes is reported at once: no second or third generation."""
NODE = "nodes/scan_worker.py"
REPLACE = [('        if runner["attempt"] >= RUNNER_MAX_ATTEMPTS:', '        if True:')]
KILLS = ["runner.retries"]
