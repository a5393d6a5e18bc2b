"""An error body is parsed with floats refused: one float anywhere in it loses its code (request_rejected), and a 409's strikes are counted under the wrong code."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('        value = parse_lenient(body, floats=True)  # D24: an error body is JSON as json.loads reads it too\n',
     '        value = parse_lenient(body)\n'),
]
KILLS = ['peer.error-body']
