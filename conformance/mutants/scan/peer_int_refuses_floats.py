"""A whole number written as a float (5.0) is no number: is_int() where the upstream calls int()."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('        if not math.isfinite(value) or not (cut or value.is_integer()) or abs(value) > MAX_SAFE_INTEGER:\n',
     '        if True:\n'),
]
KILLS = ['peer.assignment-floats', 'peer.claim-resolution']
