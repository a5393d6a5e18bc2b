"""Content-Encoding is ignored (identity was asked for, so the node assumes it got it)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            if encoding is not None and encoding.strip().lower() != \"identity\":  # CRAWLER-FETCH-6: nothing decoded\n"
    "                raise CrawlerError(CRAWLER_SOURCE_ENCODING_UNSUPPORTED, \"Content-Encoding\")\n",
    "",
)]
KILLS = ["fetch.encoding"]
