"""The upload is labelled as JSON Lines (Content-Type: application/x-ndjson) instead of application/octet-stream, the one type the contract's PUT carries."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            conn.putheader("Content-Type", "application/octet-stream")',
    '            conn.putheader("Content-Type", "application/x-ndjson")',
)]
KILLS = ["upload.request"]
