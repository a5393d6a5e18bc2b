"""A 204's Retry-After is accepted whatever its value once it is a number (0 and 301 included), so such a 204 ends the claim instead of being a protocol error."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if retry_after is None or not MIN_RETRY_AFTER_S <= retry_after <= MAX_RETRY_AFTER_S:',
    '            if retry_after is None:',
)]
KILLS = ["claim.no-work-invalid"]
