"""The finding's `redacted` shows the whole match instead of its first four characters and an ellipsis: the secret itself lands in the bundle."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                    "redacted": found[:SCAN_REDACTED_PREFIX_CHARS] + SCAN_ELLIPSIS,',
    '                    "redacted": found,',
)]
KILLS = ["work.rules"]
