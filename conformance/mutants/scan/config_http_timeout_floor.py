"""--http-timeout accepts anything from 0.1 s, below the contract's floor of 1 s."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    "http_timeout": (1.0, 3600.0),',
    '    "http_timeout": (0.1, 3600.0),',
)]
KILLS = ["config.waits"]
