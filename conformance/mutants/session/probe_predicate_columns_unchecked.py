"""Only `columns` and expression.column are held to the content; a predicate's column is not (the upstream's gap, D9)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        stack = [expression["where"]] if "where" in expression else []\n',
    '        stack = []\n',
)]
KILLS = ["probe.column-unknown"]
