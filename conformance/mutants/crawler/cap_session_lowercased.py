"""crawler_session_id is lowercased before the UUID check, so an uppercase UUID passes CAP-3 (and reaches CAP-9 instead)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "    session_id = capability[\"crawler_session_id\"]\n"
    "    if not is_canonical_uuid(session_id):  # CRAWLER-CAP-3: CAP-9 then compares strings: one spelling per session\n",
    "    session_id = capability[\"crawler_session_id\"]\n"
    "    if not is_canonical_uuid(session_id.lower()):\n",
)]
KILLS = ["cap.forms"]
