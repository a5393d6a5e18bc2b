"""Full jitter: a retry waits a draw from [0, v], so a worker may retry at once."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    delay = _RANDOM.uniform(ceiling / 2, ceiling)\n',
    '    delay = _RANDOM.uniform(0, ceiling)\n',
)]
KILLS = ["backoff.schedule"]
