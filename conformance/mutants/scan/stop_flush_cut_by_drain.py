"""The flush after a drain stops as soon as the worker is stopping, which the drain itself has just set: nothing queued at the drain is ever sent."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        while not deadline.expired() and not STOP.requested:',
    '        while not deadline.expired() and not stop_requested():',
)]
KILLS = ["stop.final-flush"]
