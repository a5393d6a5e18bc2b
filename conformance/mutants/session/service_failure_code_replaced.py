"""The Service replaces a failed session's own code with SESSION_LEGACY_PROCESS_FAILED (the upstream's, D19)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            if is_summary(doc, None) and doc["session_id"] in (None, self.start.session_id):\n',
    '            if is_summary(doc, None) and doc["session_id"] in (None, self.start.session_id) \\\n'
    '                    and doc["failure_code"] is None:\n',
)]
KILLS = ["service.summary"]
