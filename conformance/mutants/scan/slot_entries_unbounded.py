"""The start-up scan of the state tree reads every entry however many there are, so a flooded tree is scanned whole instead of failing start-up."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if count > MAX_STATE_DIR_ENTRIES:',
    '            if count < 0:',
)]
KILLS = ["slot.startup-limits"]
