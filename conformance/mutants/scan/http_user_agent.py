"""Every request also carries a User-Agent header, one more than the contract's exact set."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                        conn.putheader("Authorization", "Bearer " + token)\n',
    '                        conn.putheader("Authorization", "Bearer " + token)\n'
    '                        conn.putheader("User-Agent", "truf-scan-worker")\n',
)]
KILLS = ["http.framing"]
