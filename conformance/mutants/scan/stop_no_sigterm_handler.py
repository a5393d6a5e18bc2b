"""Only SIGINT gets a handler: SIGTERM keeps its default action, which as PID 1 of a container is to be ignored."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    for signum in (signal.SIGTERM, signal.SIGINT):\n'
    '        signal.signal(signum, on_signal)',
    '    for signum in (signal.SIGINT,):\n'
    '        signal.signal(signum, on_signal)',
)]
KILLS = ["stop.idle"]
