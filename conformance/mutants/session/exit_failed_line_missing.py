"""A failed run writes its summary but no closing stderr line naming its code."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        if kind == FAILED:\n'
    '            say(failure_line(detail))\n',
    '',
)]
KILLS = ["exit.table"]
