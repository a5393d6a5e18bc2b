"""The worker runs one slot whatever --parallelism says (the option is parsed but never used), so one stuck reservation holds up all work."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        ids = sorted(set(range(config.parallelism)) | set(slot_ids))',
    '        ids = sorted(set(range(1)) | set(slot_ids))',
)]
KILLS = ["slot.parallel"]
