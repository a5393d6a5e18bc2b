"""A failed :redeem (a 5xx, a reset) is tried once more, as transient errors usually are, though the redemption is single-use (BOOT-2)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            answer, count = redeem(config, token, length)\n',
    '            try:\n'
    '                answer, count = redeem(config, token, length)\n'
    '            except CrawlerError as exc:  # a transient failure: one more try\n'
    '                if exc.code != CRAWLER_BOOTSTRAP_REDEMPTION_FAILED or STOP.requested:\n'
    '                    raise\n'
    '                answer, count = redeem(config, token, length)\n',
)]
KILLS = ["boot.single-attempt"]
