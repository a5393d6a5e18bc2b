"""The runner is started as plain `python NODE -- _assignment_runner --root ROOT`, without -I -S: planted PYTHONPATH and site directories would run in it."""
NODE = "nodes/scan_worker.py"
REPLACE = [('command = [sys.executable, "-I", "-S", "-B", self.worker.runner_code.path(), "--", RUNNER_COMMAND,',
            'command = [sys.executable, "-B", self.worker.runner_code.path(), "--", RUNNER_COMMAND,')]
KILLS = ["runner.spawn"]
