"""Every transport error of the fetch is reported as CRAWLER_SOURCE_TIMEOUT (the socket error is lumped with timeouts)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            raise CrawlerError(CRAWLER_SOURCE_UNAVAILABLE, "transport error") from None  # CRAWLER-FETCH-7\n',
    '            raise CrawlerError(CRAWLER_SOURCE_TIMEOUT, "transport error") from None\n',
)]
KILLS = ["fetch.reset"]
