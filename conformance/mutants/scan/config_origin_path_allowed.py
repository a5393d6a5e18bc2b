"""--server may carry a path, silently dropped: a typo'd base URL is taken for an origin."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            or parts.fragment or parts.path or "?" in text',
    '            or parts.fragment or "?" in text',
)]
KILLS = ["config.origin"]
