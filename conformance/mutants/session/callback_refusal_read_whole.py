"""A refusal's body is read whole before its code is looked at, however long it is."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        return response.read(limit)\n',
    '        return response.read()[:limit]\n',
)]
KILLS = ["callback.refusals"]
