"""The main thread does not watch for a slot that died: the worker keeps running with one slot fewer and the operator never learns of it."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if any(slot.ended == "died" for slot in self.slots):\n'
    '                return self.stop(OUTCOME_SLOT_DIED)  # SCAN-SLOT-4\n',
    '',
)]
KILLS = ["slot.died"]
