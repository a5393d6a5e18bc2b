"""A report refused RESEARCH_PROBE_ALREADY_SETTLED ends the session like any other refusal."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                if refused.code == RESEARCH_PROBE_ALREADY_SETTLED and refused.status is not None:\n'
    '                    break  # SESSION-REPORT-3: settled is delivered\n',
    '',
)]
KILLS = ["report.already-settled"]
