"""The one decode of the joined rows takes a lone surrogate escape, which the row-by-row read refuses (json.loads decodes it; only encoding it fails)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            or content.count(b"\\n[", start) != lines - 1 or _SURROGATE_ESCAPE_RE.search(content, start)):\n',
    '            or content.count(b"\\n[", start) != lines - 1):\n',
)]
KILLS = ["peer.content-rows"]
