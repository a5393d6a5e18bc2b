"""A whole number written as a decimal string (a generated client's int64) is no number."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('    if isinstance(value, str) and DIGITS_RE.fullmatch(value):\n',
     '    if False:\n'),
]
KILLS = ['peer.assignment-texts']
