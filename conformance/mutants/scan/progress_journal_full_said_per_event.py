"""The journal-full line is printed for every dropped event, not once as the journal fills."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                if not self.full:\n                    self.full = True\n                    say(',
    '                if True:\n                    self.full = True\n                    say(',
)]
KILLS = ["progress.journal-held"]
