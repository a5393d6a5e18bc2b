"""Every transport error of the fetch is reported as CRAWLER_SOURCE_TIMEOUT (the socket error is lumped with timeouts)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            # CRAWLER-FETCH-7: refused, reset, TLS or a malformed answer: the source is unavailable\n'
    '            raise CrawlerError(CRAWLER_SOURCE_UNAVAILABLE, "transport error") from None\n',
    '            raise CrawlerError(CRAWLER_SOURCE_TIMEOUT, "transport error") from None\n',
)]
KILLS = ["fetch.reset"]
