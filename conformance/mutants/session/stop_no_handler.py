"""No handler for SIGTERM or SIGINT is installed: the default actions are relied on, and as PID 1 the kernel drops the signal."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "        PROCESS.wake = wake_pipe()\n"
    "        install_handlers()  # SESSION-STOP-1: before the first request, before the Service listens\n",
    "        PROCESS.wake = wake_pipe()\n"
    "        pass\n",
)]
KILLS = ["stop.idle", "stop.before-start"]
