"""A report is never retried: any failure but already-settled ends the session (the upstream's behaviour, D7)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                if not refused.transient or sends >= REPORT_ATTEMPTS:\n',
    '                if True:\n',
)]
KILLS = ["report.transient-retry"]
