"""The one decode's arrays are not counted against the lines, so two rows on one line (and one over two) pass as rows."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    return lines if arrays == lines else None\n',
    '    return lines\n',
)]
KILLS = ["peer.content-rows"]
