"""A success body need only be JSON: an array or a scalar is taken as the document."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    if not isinstance(value, dict):\n'
    '        raise error(detail=what + " is not a JSON object")\n'
    '    return value\n',
    '    return value\n',
)]
KILLS = ["http.bounded"]
