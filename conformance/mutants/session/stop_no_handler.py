"""No handler for SIGTERM or SIGINT is installed: the default actions are relied on, and as PID 1 the kernel drops the signal."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    PROCESS.open_wake()\n"
    "    install_handlers(on_signal)\n",
    "    PROCESS.open_wake()\n",
)]
KILLS = ["stop.idle", "stop.before-start"]
