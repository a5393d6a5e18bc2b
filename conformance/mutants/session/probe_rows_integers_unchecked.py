"""The one decode reads integers as json.loads does, so -0 and integers past 2^53 pass where the row-by-row read refuses them."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    decoder = json.JSONDecoder(parse_float=_finite_float, parse_constant=_refuse_constant, parse_int=_checked_int)\n',
    '    decoder = json.JSONDecoder(parse_float=_finite_float, parse_constant=_refuse_constant)\n',
)]
KILLS = ["peer.content-rows"]
