"""The monitor takes any death by a signal for the alarm: a crashed capability process reads as capability_expired, exit 0."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        alarmed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM\n',
    '        alarmed = os.WIFSIGNALED(status)\n',
)]
KILLS = ["isolation.child-exit", "isolation.scratch"]
