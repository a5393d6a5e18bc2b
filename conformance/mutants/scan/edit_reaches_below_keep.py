"""The reference scan reads WorkerError, the machinery's root error its frame does not list: a newer copy of the machinery that renames it breaks the copier's scan, unwarned."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    'SCAN_LINE_PIECE_BYTES = MAX_BUNDLE_LINE_BYTES // 4\n',
    'SCAN_LINE_PIECE_BYTES = MAX_BUNDLE_LINE_BYTES // 4 if WorkerError else 1\n',
)]
KILLS = ["node.edit-surface"]
