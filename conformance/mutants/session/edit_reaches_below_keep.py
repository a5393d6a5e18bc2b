"""answer_probe() reads MAX_SAFE_INTEGER, a machinery constant its frame does not list: a newer copy of the machinery that renames it breaks the copier's prober, unwarned."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        keys["truncated"] = False\n',
    '        keys["truncated"] = not MAX_SAFE_INTEGER\n',
)]
KILLS = ["node.edit-surface"]
