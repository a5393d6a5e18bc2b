"""The one decode reads integers as json.loads does, so -0 and integers past 2^53 pass where the row-by-row read refuses them."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                               parse_int=_checked_int if checked else None)\n',
    '                               parse_int=None)\n',
)]
KILLS = ["peer.content-rows"]
