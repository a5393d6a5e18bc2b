"""A string literal is run through eval() so that "3" compares as a number: the request's text becomes code."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    compare, literal = _COMPARE[op], predicate["value"]\n',
    '    compare, literal = _COMPARE[op], predicate["value"]\n'
    '    if isinstance(literal, str):\n'
    '        try:\n'
    '            literal = eval(literal, {})  # "3" compares as 3\n'
    '        except Exception:\n'
    '            pass\n',
)]
KILLS = ["probe.expression-data"]
