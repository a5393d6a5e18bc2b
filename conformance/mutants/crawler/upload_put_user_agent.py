"""The PUT identifies the node with the same User-Agent the source fetch sends, a header CRAWLER-UPLOAD-1 forbids on a PUT."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            conn.putheader("Content-Length", str(size))  # CRAWLER-UPLOAD-1: exact, never chunked, no Expect\n',
    '            conn.putheader("Content-Length", str(size))\n'
    '            conn.putheader("User-Agent", USER_AGENT)  # say who is storing this\n',
)]
KILLS = ["upload.wire", "report.bundle"]
