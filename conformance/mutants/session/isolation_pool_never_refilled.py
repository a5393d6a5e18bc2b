"""A child taken from the warm pool is never replaced, so every probe after the first pays an interpreter's start."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        if not STOP.requested:\n'
    '            self.pool.fill()\n',
    '',
)]
KILLS = ["isolation.pool-refill"]
