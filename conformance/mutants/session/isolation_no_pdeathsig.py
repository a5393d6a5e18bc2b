"""The capability process has no parent-death signal: it outlives a monitor killed with SIGKILL, capability in hand."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "            raise SessionError(SESSION_PROCESS_ISOLATION_UNAVAILABLE, \"PR_SET_DUMPABLE\")\n"
    "        if prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL)) != 0:  # SESSION-ISOLATION-3: nothing outlives its parent\n",
    "            raise SessionError(SESSION_PROCESS_ISOLATION_UNAVAILABLE, \"PR_SET_DUMPABLE\")\n"
    "        if False:  # SESSION-ISOLATION-3: nothing outlives its parent\n",
)]
KILLS = ["isolation.orphans"]
