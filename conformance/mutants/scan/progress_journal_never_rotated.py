"""The journal's rotation threshold is set so high that the journal is never rotated: it grows with every event delivered."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    'MAX_JOURNAL_BYTES = 1024 * 1024',
    'MAX_JOURNAL_BYTES = 1024 ** 4',
)]
KILLS = ["progress.rotate"]
