"""Every SIGTERM asks for a drain, the second too (as Celery does): only SIGINT stops at once."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    if signum == signal.SIGTERM and PROCESS.signals == 1:',
    '    if signum == signal.SIGTERM:',
)]
KILLS = ["stop.signals"]
