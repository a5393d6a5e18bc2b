"""A line is held and scanned whole, however long: no piece cut at MAX_BUNDLE_LINE_BYTES / 4, so memory grows with the longest line (and a match across the cut is found)."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                if len(self._piece) >= SCAN_LINE_PIECE_BYTES:  # SCAN-WORK-1: a full piece is scanned; the line goes on\n'
    '                    self._scan_piece(events)',
    '                if len(self._piece) >= SCAN_LINE_PIECE_BYTES:  # SCAN-WORK-1: a full piece is scanned; the line goes on\n'
    '                    pass',
)]
KILLS = ["work.long-line"]
