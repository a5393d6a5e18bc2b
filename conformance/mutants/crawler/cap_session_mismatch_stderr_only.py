"""A capability for another session is treated like every other capability fault: CAPABILITY_INVALID, stderr-only, no :fail."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        raise CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_INVALID, "a capability for another session")\n',
    '        raise invalid("a capability for another session")\n',
)]
KILLS = ["cap.session-mismatch"]
