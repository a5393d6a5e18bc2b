"""A 307 or 308 answering :redeem is followed (they preserve the method, so re-POSTing looks correct), though BOOT-2 says never."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "                raise CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE, \"too large\")\n"
    "            if response.status != 200:  # CRAWLER-BOOT-2: a redirect included, never followed\n",
    "                raise CrawlerError(CRAWLER_BOOTSTRAP_RESPONSE_TOO_LARGE, \"too large\")\n"
    "            location = response.getheader(\"Location\")\n"
    "            if response.status in (307, 308) and location:  # method-preserving: POST it there\n"
    "                moved = config._replace(url_base=location.rsplit(\"/\", 1)[0])\n"
    "                return redeem(moved, token, length)\n"
    "            if response.status != 200:\n",
)]
KILLS = ["boot.redirect"]
