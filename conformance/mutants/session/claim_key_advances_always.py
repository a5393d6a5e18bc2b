"""The claim's poll number advances on every claim, answered or not (the upstream's behaviour, D26)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                if refused.status is not None and 400 <= refused.status < 500 and refused.status != 429:\n',
    '                if True:\n',
)]
KILLS = ["claim.key-after-failure"]
