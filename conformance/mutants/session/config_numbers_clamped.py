"""A decimal variable above its range is clamped to the maximum instead of refused."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    value = decimal.Decimal(text)\n'
    '    if not 0 < value <= highest:  # SESSION-CONFIG-2: out of range is refused, never clamped\n',
    '    value = min(decimal.Decimal(text), decimal.Decimal(highest))\n'
    '    if not 0 < value <= highest:  # SESSION-CONFIG-2: out of range is refused, never clamped\n',
)]
KILLS = ["config.numbers"]
