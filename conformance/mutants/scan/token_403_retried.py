"""A 403 is treated like a 401: the file is re-read and the request sent again at once."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if exc.status != 401:\n'
    '                raise\n',
    '            if exc.status not in (401, 403):\n'
    '                raise\n',
)]
KILLS = ["token.401-reread"]
