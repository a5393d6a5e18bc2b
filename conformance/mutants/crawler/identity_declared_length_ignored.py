"""The metadata answer's Content-Length is not looked at: a declared 20000 bytes is read (and waited for) before the size is judged (IDENTITY-4)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            declared = announced_length(response)\n'
    '            if declared is not None and declared > MAX_METADATA_IDENTITY_TOKEN_BYTES:  # CRAWLER-IDENTITY-4: unread\n'
    '                raise CrawlerError(CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE, "metadata answer too large")  # D4\n',
    '',
)]
KILLS = ["identity.oversize"]
