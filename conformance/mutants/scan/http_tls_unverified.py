"""TLS without verification (a test-only shortcut left in): any certificate is accepted."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        PROCESS.tls = ssl.create_default_context()\n',
    '        PROCESS.tls = ssl._create_unverified_context()\n',
)]
KILLS = ["http.untrusted"]
