"""The one decode reads integers as json.loads does, so -0 and integers past 2^53 pass where the row-by-row read refuses them."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        rows = json.JSONDecoder(parse_float=_finite_float, parse_constant=_refuse_constant,\n'
    '                                parse_int=_checked_int).decode(\n',
    '        rows = json.JSONDecoder(parse_float=_finite_float, parse_constant=_refuse_constant).decode(\n',
)]
KILLS = ["peer.content-rows"]
