"""An upload's body is sent with no timeout at all (only the answer is bounded): a server that stops reading holds the slot for ever."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                            upload(conn)  # SCAN-UPLOAD-1: its own headers, then the body, each piece within budget_s\n',
    '                            conn.sock.settimeout(None)\n'
    '                            upload(conn)\n',
)]
KILLS = ["http.upload-stalled"]
