"""A child that exits 0 with nothing on stdout is taken to have failed (CRAWLER_CHILD_FAILED) rather than to have broken the protocol."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        raise CrawlerError(CRAWLER_CHILD_INVALID, "no result")\n',
    '        raise CrawlerError(CRAWLER_CHILD_FAILED if output.stdout_size == 0 else CRAWLER_CHILD_INVALID, "no result")\n',
)]
KILLS = ["child.empty"]
