"""Persisted slot ids are not bounded, so a forged slot-100001.json starts a slot (and a thread) the operator never asked for."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if slot_id > MAX_SLOT_ID:',
    '            if slot_id < 0:',
)]
KILLS = ["slot.startup-limits"]
