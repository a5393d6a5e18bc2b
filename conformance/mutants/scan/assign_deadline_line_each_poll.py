"""The past-deadline line is printed at every poll instead of once, flooding the log while the slot waits."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                if self.said_past_deadline != rid:  # SCAN-ASSIGN-3: one line, then quiet polling',
    '                if True:',
)]
KILLS = ["assign.past-deadline"]
