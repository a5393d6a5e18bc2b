"""A cache that cannot be written fails the launch (and so the assignment) instead of starting the runner from the node file."""
NODE = "nodes/scan_worker.py"
REPLACE = [('self.known, self.failed = None, digest  # D34: no cache is never a failed assignment\n'
            '                return self.node_path',
            'raise')]
KILLS = ["runner.code-unwritable"]
