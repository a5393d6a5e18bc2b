"""The Service never scales to zero: it serves until it is stopped."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        if idle and left <= 0:  # SESSION-SERVICE-7: no session for the grace: scale to zero\n',
    '        if False:  # SESSION-SERVICE-7: no session for the grace: scale to zero\n',
)]
KILLS = ["service.idle-exit"]
