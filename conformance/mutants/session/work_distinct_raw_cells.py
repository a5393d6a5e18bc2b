"""distinct counts the raw strings rather than their previews, so two long strings that differ past 256 characters count twice."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    return preview(cell) if isinstance(cell, str) else (type(cell), repr(cell))\n',
    '    return cell if isinstance(cell, str) else (type(cell), repr(cell))\n',
)]
KILLS = ["work.profile"]
