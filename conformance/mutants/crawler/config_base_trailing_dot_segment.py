"""The base path is checked for '/./' and '/../' inside it but not for a trailing '/.' or '/..' (D2), which a URL library resolves away."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'if any(bad in path for bad in _FORBIDDEN_IN_PATH) or path.endswith(("/.", "/..")):',
    'if any(bad in path for bad in _FORBIDDEN_IN_PATH):',
)]
KILLS = ["config.base-rules"]
