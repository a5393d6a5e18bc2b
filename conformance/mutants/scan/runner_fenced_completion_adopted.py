"""A completed terminal is adopted even for a generation the worker already recorded as fenced."""
NODE = "nodes/scan_worker.py"
REPLACE = [('        if decision == "completed" and runner["status"] in ("stopping", "timed_out", "fenced"):',
            '        if False:')]
KILLS = ["runner.late-completion"]
