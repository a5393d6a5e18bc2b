"""Instants are read only as `Z` or `+00:00` (the node before issue 20): a deadline in another zone is no deadline."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('    if not isinstance(value, str) or not value or len(value) > MAX_INSTANT_CHARS:\n        return None\n',
     '    if not isinstance(value, str) or not value or len(value) > MAX_INSTANT_CHARS:\n        return None\n    return parse_instant(value)\n'),
]
KILLS = ['peer.instants']
