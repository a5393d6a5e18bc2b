"""A leftover slot beyond --parallelism is run like any other: once its assignment is done it claims more work instead of retiring."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        self.slots = [Slot(self, slot_id, slot_id < config.parallelism) for slot_id in ids]',
    '        self.slots = [Slot(self, slot_id, True) for slot_id in ids]',
)]
KILLS = ["slot.leftover-retires"]
