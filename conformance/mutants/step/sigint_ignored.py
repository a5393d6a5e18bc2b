"""SIGINT is set to SIG_IGN (to avoid KeyboardInterrupt tracebacks) instead of being handled like SIGTERM."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    install_handlers(STOP.handle)\n",
    "    install_handlers(STOP.handle, signals=(signal.SIGTERM,))\n"
    "    signal.signal(signal.SIGINT, signal.SIG_IGN)  # no KeyboardInterrupt tracebacks\n",
)]
KILLS = ["stop.sigint"]
