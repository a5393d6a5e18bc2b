"""A decimal variable above its range is clamped to the maximum instead of refused."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if not (math.isfinite(value) and 0 < value <= highest):  # SESSION-CONFIG-2: nan and inf are out of range\n',
    '    value = min(value, float(highest))\n'
    '    if not (math.isfinite(value) and 0 < value <= highest):  # SESSION-CONFIG-2: nan and inf are out of range\n',
)]
KILLS = ["config.numbers"]
