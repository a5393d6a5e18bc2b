"""The cursor moves past an event before it is sent: an event whose answer is lost (a crash, an error) is never sent again."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        for sequence, event, end in events:\n'
    '            reservation_id = event.get("reservation_id")\n',
    '        for sequence, event, end in events:\n'
    '            self.journal.advance(sequence, end)\n'
    '            reservation_id = event.get("reservation_id")\n',
)]
KILLS = ["progress.resume", "progress.acknowledgement"]
