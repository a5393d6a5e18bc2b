"""Only SIGINT gets a handler: SIGTERM keeps its default action, which as PID 1 of a container is to be ignored."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    install_handlers(on_signal)\n',
    '    install_handlers(on_signal, signals=(signal.SIGINT,))\n',
)]
KILLS = ["stop.idle"]
