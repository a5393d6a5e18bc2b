"""State files are written as indented JSON (readable, still parseable), not the canonical bytes."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    """SCAN-STATE-2: canonical bytes, whole or not at all, mode 0600."""\n    data = canonical(value)',
    '    """SCAN-STATE-2: canonical bytes, whole or not at all, mode 0600."""\n'
    '    data = json.dumps(value, sort_keys=True, indent=1).encode("ascii")',
)]
KILLS = ["state.valid-before-each-call"]
