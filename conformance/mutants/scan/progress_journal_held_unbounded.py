"""The held journal's bound is set so high that it is never reached: a server that takes no progress grows the journal without end."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    'MAX_JOURNAL_HELD_BYTES = 8 * 1024 * 1024',
    'MAX_JOURNAL_HELD_BYTES = 1024 ** 4',
)]
KILLS = ["progress.journal-held"]
