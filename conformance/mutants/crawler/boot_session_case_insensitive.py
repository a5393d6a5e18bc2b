"""The bootstrap's crawler_session_id is compared with the argv session ignoring case (UUIDs are case-insensitive), though BOOT-4 compares the text."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'if not same(document["crawler_session_id"], config.session_id):',
    'if str(document["crawler_session_id"]).lower() != config.session_id:',
)]
KILLS = ["boot.strict-response"]
