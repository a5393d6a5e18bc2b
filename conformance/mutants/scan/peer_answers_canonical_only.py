"""Answers must be canonical JSON (sorted keys, no whitespace, ASCII escapes), as the worker writes its own: an indented answer is a protocol error."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    (' else parse_lenient(data, floats=True)\n',
     ' else parse_canonical(data, floats=True, ascii=True)\n'),
]
KILLS = ['peer.pretty-json']
