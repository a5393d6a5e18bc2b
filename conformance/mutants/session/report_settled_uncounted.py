"""A probe found already settled is delivered but counted in neither probes_answered nor probes_failed."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                if refused.code == RESEARCH_PROBE_ALREADY_SETTLED and refused.status is not None:\n'
    '                    break  # SESSION-REPORT-3: settled is delivered\n',
    '                if refused.code == RESEARCH_PROBE_ALREADY_SETTLED and refused.status is not None:\n'
    '                    self.progress.flush(cap=self.drain_cap)\n'
    '                    return\n',
)]
KILLS = ["report.already-settled"]
