"""Two token sources are accepted (the first found wins) instead of being a usage error."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    elif sum(sources) != 1:  # SCAN-TOKEN-1\n',
    '    elif sum(sources) == 0:  # SCAN-TOKEN-1\n',
)]
KILLS = ["token.one-source"]
