"""The :redeem answer's Content-Length is not looked at: an answer declared over the bound is read (and waited for) before its size is judged (BOOT-3)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            if declared is not None and declared > MAX_BOOTSTRAP_RESPONSE_BYTES:  # CRAWLER-BOOT-3: refused unread\n'
    '                raise CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE, "announced too large")\n',
    '',
)]
KILLS = ["boot.oversize"]
