"""No SIGTERM handler is installed: fine as a plain process, but as PID 1 the kernel drops SIGTERM and the step runs on."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    install_handlers(STOP.handle)\n",
    "    install_handlers(STOP.handle, signals=(signal.SIGINT,))\n",
)]
KILLS = ["stop.pid1", "stop.after-work"]
