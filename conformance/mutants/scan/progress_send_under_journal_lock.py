"""The progress request is sent while holding the journal's lock: every slot's next event waits for a hung progress request."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                    ack = self.api.progress(reservation_id, canonical(event),\n'
    '                                            min(PROGRESS_REQUEST_TIMEOUT_S, max(0.05, budget.remaining())))\n',
    '                    with self.journal.lock:\n'
    '                        ack = self.api.progress(reservation_id, canonical(event),\n'
    '                                                min(PROGRESS_REQUEST_TIMEOUT_S, max(0.05, budget.remaining())))\n',
)]
KILLS = ["progress.never-holds-up"]
