"""A consumed dispatch ends the run with its code and exit 1, so the platform retries the task for ever."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            raise SessionOver(terminal=DISPATCH_CONSUMED)\n',
    '            raise SessionError(code, "the dispatch is consumed")\n',
)]
KILLS = ["dispatch.consumed"]
