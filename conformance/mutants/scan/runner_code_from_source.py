"""Every runner starts from the node's source, as before D34: a fresh interpreter compiles the whole node on every assignment, most of a runner's start."""
NODE = "nodes/scan_worker.py"
REPLACE = [('command = [sys.executable, "-I", "-S", "-B", self.worker.runner_code.path(), "--", RUNNER_COMMAND,',
            'command = [sys.executable, "-I", "-S", "-B", self.worker.config.node_path, "--", RUNNER_COMMAND,')]
KILLS = ["runner.warm-start"]
