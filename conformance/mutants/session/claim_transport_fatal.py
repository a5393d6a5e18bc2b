"""A claim that got no answer ends the session at once instead of counting as a failure (the upstream, D21)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                if refused.code in FENCE_LOST_CODES and refused.status is not None:\n',
    '                if refused.status is None:\n'
    '                    raise SessionOver(failure=refused.code)\n'
    '                if refused.code in FENCE_LOST_CODES and refused.status is not None:\n',
)]
KILLS = ["claim.failures"]
