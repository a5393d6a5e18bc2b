"""A body that ends before its Content-Length is taken as complete (http.client reports no error when the server closes early)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "    if declared is not None and size < declared:  # CRAWLER-FETCH-6: the server closed early\n"
    "        raise CrawlerError(CRAWLER_SOURCE_UNAVAILABLE, \"shorter than its Content-Length\")\n",
    "",
)]
KILLS = ["fetch.truncated"]
