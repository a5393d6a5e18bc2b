"""Retries wait exactly v, min(16 x base, base x 2^(n-1)), with no jitter: workers that failed together retry together."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    delay = _RANDOM.uniform(ceiling / 2, ceiling)\n',
    '    delay = ceiling\n',
)]
KILLS = ["backoff.schedule"]
