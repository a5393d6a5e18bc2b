"""A boolean claim interval is taken as a number (true as 1 s), as Python's bool-is-int makes easy (D4)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0:\n',
    '        if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:\n',
)]
KILLS = ["claim.interval"]
