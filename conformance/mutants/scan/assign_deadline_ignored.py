"""The status's deadline is not looked at before execution, so an assignment already past its deadline is scanned and its bundle uploaded."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if expires is not None and expires <= time.time():',
    '            if expires is not None and expires <= time.time() - 86400:',
)]
KILLS = ["assign.past-deadline"]
