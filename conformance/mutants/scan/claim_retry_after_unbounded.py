"""A 204's Retry-After is accepted whatever its value once it is digits (0 and 301 included), so such a 204 ends the claim instead of being a protocol error."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if not RETRY_AFTER_RE.fullmatch(value) or not MIN_RETRY_AFTER_S <= int(value) <= MAX_RETRY_AFTER_S:',
    '            if not RETRY_AFTER_RE.fullmatch(value):',
)]
KILLS = ["claim.no-work-invalid"]
