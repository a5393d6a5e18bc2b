"""A declared size that is not an integer is called too large, as the upstream does (D14)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if is_int(size) and size > MAX_PROBE_ACQUISITION_BUNDLE_BYTES:  # judged on the declared size\n',
    '    if not is_int(size) or size > MAX_PROBE_ACQUISITION_BUNDLE_BYTES:\n',
)]
KILLS = ["acquire.descriptor"]
