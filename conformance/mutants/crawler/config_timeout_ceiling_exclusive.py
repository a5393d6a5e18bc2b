"""A timeout variable must be below its constant instead of at most it (< for <=), so a value equal to the constant is refused."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'if not 0 < seconds <= ceiling:',
    'if not 0 < seconds < ceiling:',
)]
KILLS = ["config.timeouts"]
