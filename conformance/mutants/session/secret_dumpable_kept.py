"""The capability process never makes itself non-dumpable: any process of the same user may read its memory."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        if prctl(PR_SET_DUMPABLE, 0) != 0:  # SESSION-SECRET-4: before any token, nonce or capability exists\n',
    '        if False:  # SESSION-SECRET-4: before any token, nonce or capability exists\n',
)]
KILLS = ["secret.dumpable"]
