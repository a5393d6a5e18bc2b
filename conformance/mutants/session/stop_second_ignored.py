"""A second stop is treated like the first: the node keeps draining until its grace runs out."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            if PROCESS.signals >= 2:  # SESSION-STOP-6: a second stop ends it now\n',
    '            if False:  # SESSION-STOP-6: a second stop ends it now\n',
)]
KILLS = ["stop.second"]
