"""TLS without verification (a test-only shortcut left in): any certificate is accepted."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        FLOW.tls = ssl.create_default_context()\n',
    '        FLOW.tls = ssl._create_unverified_context()\n',
)]
KILLS = ["http.untrusted"]
