"""The rows after a JSON-lines header are counted as lines, not read, so a row that breaks its form past the window a probe reads goes unseen (a first probe made cheap by skipping the strict read)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        count = array_row_count(content, header[1], len(header[0])) if header is not None else None\n',
    '        count = content.count(b"\\n", header[1]) if header is not None else None\n',
)]
KILLS = ["peer.content-rows"]
