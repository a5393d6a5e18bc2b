"""The cached code is reused while its file is intact, whatever the node file holds now: a node replaced while the worker runs keeps running its old code in every runner."""
NODE = "nodes/scan_worker.py"
REPLACE = [('if self.known is not None and self.known[0] == digest and self._intact(self.known):',
            'if self.known is not None and self._intact(self.known):')]
KILLS = ["runner.code-changed"]
