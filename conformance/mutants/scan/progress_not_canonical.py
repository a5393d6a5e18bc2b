"""Progress events are POSTed as json.dumps' default text (spaces after separators, keys unsorted), not the canonical bytes of their journal line."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                    ack = self.api.progress(reservation_id, canonical(event),',
    '                    ack = self.api.progress(reservation_id, json.dumps(event).encode("ascii"),',
)]
KILLS = ["progress.events"]
