"""A claim refused with a fence code is retried like any other failure instead of ending the session."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                if refused.code in FENCE_LOST_CODES and refused.status is not None:\n',
    '                if False:\n',
)]
KILLS = ["claim.fence-lost"]
