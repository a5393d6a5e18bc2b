"""A dropped event still takes a sequence: the journal's numbering jumps over the outage."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                    say("worker: progress journal full, new events dropped")  # SCAN-OUTPUT-1\n                return\n',
    '                    say("worker: progress journal full, new events dropped")  # SCAN-OUTPUT-1\n'
    '                self.next_sequence += 1\n                return\n',
)]
KILLS = ["progress.journal-held"]
