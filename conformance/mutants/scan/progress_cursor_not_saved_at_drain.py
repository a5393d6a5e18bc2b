"""The drain's flush leaves the cursor on disk before the skipped events (D38): a cursor that lags what was delivered or skipped."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if self.journal.caught_up():\n'
    '                self.journal.save_cursor()\n'
    '                return True\n',
    '            if self.journal.caught_up():\n'
    '                return True\n',
)]
KILLS = ["stop.final-flush"]
