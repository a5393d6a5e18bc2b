"""No SIGTERM handler is installed: fine as a plain process, but as PID 1 the kernel drops SIGTERM and the step runs on."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    signal.signal(signal.SIGTERM, STOP.handle)  # STEP-STOP-1: handled, also as PID 1 (no default disposition there)\n",
    "",
)]
KILLS = ["stop.pid1", "stop.after-work"]
