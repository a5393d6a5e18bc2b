"""A failed probe is reported with its display code (SESSION_ACQUISITION_THROTTLED for a throttle), not the wire code."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            doc.update(outcome="failed", failure_code=probe.code)  # SESSION-REPORT-2: the wire code\n',
    '            doc.update(outcome="failed", failure_code=THROTTLE_WIRE_CODES.get(probe.code, probe.code))\n',
)]
KILLS = ["report.request"]
