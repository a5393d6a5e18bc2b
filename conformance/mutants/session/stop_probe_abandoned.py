"""A probe in flight when a stop arrives is dropped unreported (the upstream SIGKILLs it): the person waiting never learns."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            if probe.result is None:  # SESSION-STOP-3: a definite answer at once, without waiting\n',
    '            if probe.result is None:  # SESSION-STOP-3: a definite answer at once, without waiting\n'
    '                raise SessionOver(terminal=SERVICE_STOPPED)\n',
)]
KILLS = ["stop.probe-in-flight"]
