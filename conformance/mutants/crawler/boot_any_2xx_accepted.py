"""Any 2xx answering :redeem is taken as the bootstrap, not only 200 (BOOT-2)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "                raise CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE, \"too large\")\n"
    "            if response.status != 200:  # CRAWLER-BOOT-2: a redirect included, never followed\n",
    "                raise CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE, \"too large\")\n"
    "            if not 200 <= response.status < 300:  # a success\n",
)]
KILLS = ["boot.single-attempt"]
