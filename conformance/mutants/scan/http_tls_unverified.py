"""TLS without verification (a test-only shortcut left in): any certificate is accepted."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            _TLS_CONTEXT.append(ssl.create_default_context())\n',
    '            _TLS_CONTEXT.append(ssl._create_unverified_context())\n',
)]
KILLS = ["http.untrusted"]
