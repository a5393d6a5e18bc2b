"""A 401 is always retried once at once, with the same token when the file holds nothing new."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if fresh is None:\n'
    '                raise  # SCAN-TOKEN-7: nothing new to try: the error delay, state untouched\n',
    '            if fresh is None:\n'
    '                fresh = token\n',
)]
KILLS = ["token.401-reread"]
