"""sample_rows' rows_scanned counts only the window's rows, not the rows skipped to reach it (D10)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    keys = {"rows_scanned": skipped + len(window),  # D10: rows read, counted before any is dropped\n',
    '    keys = {"rows_scanned": len(window),\n',
)]
KILLS = ["work.sample-rows"]
