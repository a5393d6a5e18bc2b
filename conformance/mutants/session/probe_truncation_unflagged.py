"""Rows dropped to fit the result bound are dropped silently: truncated stays false."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    keys["truncated"] = True  # SESSION-WORK-3: at least the last row goes, and truncated says so\n',
    '',
)]
KILLS = ["probe.relations"]
