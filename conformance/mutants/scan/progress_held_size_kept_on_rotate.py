"""The journal's size is not reset when it is replaced: once full, no event is ever written again."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        self.read_offset = self.size = 0\n        self.full = False\n',
    '        self.read_offset = 0\n        self.full = False\n',
)]
KILLS = ["progress.journal-held"]
