"""Any refused read fails the probe, a 503 included: a transient read failure is not retried."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                    if not refused.transient:\n'
    '                        raise ProbeFailure(refused.code) from None\n',
    '                    if True:\n'
    '                        raise ProbeFailure(refused.code) from None\n',
)]
KILLS = ["acquire.read-refusals"]
