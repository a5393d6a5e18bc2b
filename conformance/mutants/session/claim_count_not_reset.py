"""An accepted claim answer does not reset the count of claim failures."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            poll, failures = poll + 1, 0  # SESSION-CLAIM-1, -7: an accepted answer\n',
    '            poll += 1\n',
)]
KILLS = ["claim.failures"]
