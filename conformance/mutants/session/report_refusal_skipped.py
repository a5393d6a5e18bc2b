"""A report refused for good is given up and the session goes on, the probe counted as if delivered."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                if not refused.transient or sends >= REPORT_ATTEMPTS:\n'
    '                    raise SessionOver(failure=refused.code) from None  # SESSION-REPORT-5: not counted, not narrated\n',
    '                if not refused.transient or sends >= REPORT_ATTEMPTS:\n'
    '                    break\n',
)]
KILLS = ["report.fatal"]
