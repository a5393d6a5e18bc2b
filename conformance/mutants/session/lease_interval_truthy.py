"""An interval is any positive number to Python, so true is an interval of 1 s."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= MAX_SAFE_INTEGER\n',
    '    return isinstance(value, (int, float)) and 0 < value <= MAX_SAFE_INTEGER\n',
)]
KILLS = ["lease.intervals"]
