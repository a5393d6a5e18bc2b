"""A 200 with an empty body goes on to the parser (and becomes RESPONSE_INVALID) instead of being a failed redemption (BOOT-2)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            if count == 0:  # CRAWLER-BOOT-2: an empty body\n'
    '                raise CrawlerError(CRAWLER_BOOTSTRAP_REDEMPTION_FAILED, "empty answer")\n',
    '',
)]
KILLS = ["boot.empty-body"]
