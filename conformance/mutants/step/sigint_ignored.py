"""SIGINT is set to SIG_IGN (to avoid KeyboardInterrupt tracebacks) instead of being handled like SIGTERM."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    signal.signal(signal.SIGINT, STOP.handle)  # STEP-STOP-1: Ctrl-C is a stop, never a traceback\n",
    "    signal.signal(signal.SIGINT, signal.SIG_IGN)  # no KeyboardInterrupt tracebacks\n",
)]
KILLS = ["stop.sigint"]
