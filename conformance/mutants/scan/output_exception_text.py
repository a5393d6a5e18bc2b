"""A failed step's line adds the exception's text after its summary, for the operator's convenience."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                say("worker slot %d: %s" % (self.slot_id, summary_of(exc)))  # SCAN-OUTPUT-1: a fixed line\n',
    '                say("worker slot %d: %s: %s" % (self.slot_id, summary_of(exc), exc))\n',
)]
KILLS = ["output.failure-lines"]
