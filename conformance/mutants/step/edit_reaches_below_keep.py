"""The work reads CHUNK_BYTES, a machinery constant its frame does not list: a newer copy of the machinery that renames it breaks the copier's work, unwarned."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    '    run.metrics["files"] += 1\n',
    '    run.metrics["files"] += 1 if CHUNK_BYTES else 0\n',
)]
KILLS = ["node.edit-surface"]
