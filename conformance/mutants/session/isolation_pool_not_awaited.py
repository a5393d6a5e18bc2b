"""attempt:start goes out as soon as the pool's children are spawned, before any of them has its sandbox in place."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        self.start_pool()  # SESSION-ISOLATION-8 (D11): before attempt:start\n',
    '        self.pool.fill()  # SESSION-ISOLATION-8 (D11): before attempt:start\n',
)]
KILLS = ["isolation.warm-pool"]
