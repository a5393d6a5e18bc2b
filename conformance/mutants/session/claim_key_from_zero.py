"""The claim's poll number starts at 0 instead of 1."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        poll, failures = 1, 0\n',
    '        poll, failures = 0, 0\n',
)]
KILLS = ["claim.request"]
