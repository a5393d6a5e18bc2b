"""source_inspect lists an example value beside each column's type, and the node's own shape check lets the extra key through."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    for row in scanned:\n'
    '        count += 1\n'
    '        for found, value in zip(types, row):\n',
    '    examples = [None] * len(columns)\n'
    '    for row in scanned:\n'
    '        count += 1\n'
    '        examples = [e if e is not None else v for e, v in zip(examples, row)]\n'
    '        for found, value in zip(types, row):\n',
), (
    '            "columns": [{"name": name, "inferred_type": kind} for name, kind in pairs[:MAX_PROFILE_COLUMNS]]}\n',
    '            "columns": [{"name": name, "inferred_type": kind, "example": example}\n'
    '                        for (name, kind), example in zip(pairs[:MAX_PROFILE_COLUMNS], examples)]}\n',
), (
    '    if not (isinstance(entries, list) and all(_has_keys(entry, ("name", "inferred_type")) for entry in entries)):\n',
    '    if not (isinstance(entries, list) and all(isinstance(entry, dict) for entry in entries)):\n',
)]
KILLS = ["probe.inspect-no-value"]
