"""A CSV number needs no decimal point before its exponent, so "1e5" becomes 100000.0 instead of staying text."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '_CSV_FLOAT_RE = re.compile(r"-?(?:0|[1-9][0-9]*)\\.[0-9]+(?:[eE][-+]?[0-9]+)?")\n',
    '_CSV_FLOAT_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")\n',
)]
KILLS = ["work.cells"]
