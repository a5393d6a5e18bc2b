"""The capability process has no parent-death signal: it outlives a monitor killed with SIGKILL, capability in hand."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        if prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL)) != 0:  # SESSION-ISOLATION-3: nothing outlives its parent\n',
    '        if False:  # SESSION-ISOLATION-3: nothing outlives its parent\n',
)]
KILLS = ["isolation.orphans"]
