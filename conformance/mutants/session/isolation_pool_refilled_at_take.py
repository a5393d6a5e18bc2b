"""The warm pool is refilled as a child is taken, so a new interpreter starts beside the probe a person waits for and competes with it for a core."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        if child is None:\n'
    '            child = spawn_probe_child(self.config, self.code)\n'
    '        return child\n',
    '        if child is None:\n'
    '            child = spawn_probe_child(self.config, self.code)\n'
    '        self.fill()\n'
    '        return child\n',
)]
KILLS = ["isolation.pool-refill"]
