"""expires_at is parsed with the deadline block's lenient ISO-8601 parser (offsets, lowercase z, a space for T), not the canonical-timestamp form."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    expires_at = parse_timestamp(capability["expires_at"])\n',
    '    expires_at = parse_utc_timestamp(capability["expires_at"])\n',
)]
KILLS = ["cap.forms"]
