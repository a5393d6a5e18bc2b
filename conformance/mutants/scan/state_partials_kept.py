"""Temporary files of an interrupted write are never swept at start: they pile up in the state tree."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        if name.startswith(".") and name.endswith(".partial"):\n            try:',
    '        if False:\n            try:',
)]
KILLS = ["state.partials-removed"]
