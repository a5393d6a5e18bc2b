"""A start while a session is live is accepted: a second session process leases beside the first."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                busy = SERVICE.live is not None or SERVICE.stopping\n',
    '                busy = SERVICE.stopping\n',
)]
KILLS = ["service.busy"]
