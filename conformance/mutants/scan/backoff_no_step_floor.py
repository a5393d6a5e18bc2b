"""Steps that did work follow each other with no floor, so a run of instant answers turns the slot into a busy loop against the server."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            self.wait(max(MIN_STEP_S, delay))  # SCAN-BACKOFF-4: never more often than every 0.1 s',
    '            if delay:\n'
    '                self.wait(delay)',
)]
KILLS = ["backoff.work-pace"]
