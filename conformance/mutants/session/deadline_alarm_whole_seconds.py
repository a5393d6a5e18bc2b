"""The capability process's alarm is armed with signal.alarm in whole seconds: it fires up to a second before the expiry."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        signal.setitimer(signal.ITIMER_REAL, max(0.001, deadline.remaining()))\n',
    '        signal.alarm(max(1, int(deadline.remaining())))\n',
)]
KILLS = ["deadline.idle", "deadline.probe-in-flight"]
