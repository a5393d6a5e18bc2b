"""A failed probe is reported with its timeline class (refused, throttled, ...) as outcome instead of "failed"."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            doc.update(outcome="failed", failure_code=probe.code)  # SESSION-REPORT-2: the wire code\n',
    '            doc.update(outcome=outcome_class(THROTTLE_WIRE_CODES.get(probe.code, probe.code)),\n'
    '                       failure_code=probe.code)\n',
)]
KILLS = ["report.request"]
