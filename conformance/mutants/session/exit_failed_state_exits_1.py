"""A session the server says is `failed` ends with exit 1, as if the worker had failed (the naive mapping)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    return (FAILED if summary["failure_code"] is not None else TERMINAL), summary\n',
    '    return (FAILED if summary["failure_code"] is not None or summary["terminal_state"] == FAILED_STATE\n'
    '            else TERMINAL), summary\n',
)]
KILLS = ["exit.table"]
