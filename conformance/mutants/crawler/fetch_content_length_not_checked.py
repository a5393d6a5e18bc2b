"""The announced Content-Length is not compared with max_source_bytes before reading: the streaming limit alone is relied on."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            if response.length is not None and response.length > limit:  # CRAWLER-FETCH-6: before the body\n"
    "                raise CrawlerError(CRAWLER_SOURCE_TOO_LARGE, \"announced over max_source_bytes\")\n",
    "",
)]
KILLS = ["fetch.too-large-declared"]
