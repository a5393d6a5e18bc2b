"""prctl(PR_SET_DUMPABLE, 0) is never called: the node stays dumpable while it holds its tokens and the signed URL."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        raise CrawlerError(CRAWLER_RESULTS_BUCKET_REQUIRED, \"the results bucket is missing or malformed\")\n"
    "    disable_dumpability()  # CRAWLER-SECRET-1: right after the bucket, before any secret exists\n",
    "        raise CrawlerError(CRAWLER_RESULTS_BUCKET_REQUIRED, \"the results bucket is missing or malformed\")\n",
)]
KILLS = ["secret.dumpable"]
