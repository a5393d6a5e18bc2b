"""A throttle's settled event shows the wire code as its display code, so its class is failed rather than throttled."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                display = THROTTLE_WIRE_CODES.get(probe.code, probe.code)\n',
    '                display = probe.code\n',
)]
KILLS = ["progress.settled-facts"]
