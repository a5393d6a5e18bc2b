"""--drain-seconds is never enforced: a drain waits as long as the work in hand takes."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                if drain_deadline.expired():\n'
    '                    return self.stop(OUTCOME_STOPPED)  # D11: a drain is bounded; then it is a stop',
    '                if False:\n'
    '                    return self.stop(OUTCOME_STOPPED)',
)]
KILLS = ["stop.drain-bound"]
