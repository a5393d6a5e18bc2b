"""STUDIO_API_ORIGIN is accepted when it is any https URL, a path included, not only an origin."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if not is_origin(origin):  # SESSION-CONFIG-3: an origin, in its one spelling\n',
    '    if not is_https_url(origin):  # SESSION-CONFIG-3: an origin, in its one spelling\n',
)]
KILLS = ["config.names"]
