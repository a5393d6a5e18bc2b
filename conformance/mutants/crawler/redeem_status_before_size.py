"""The :redeem status is judged before the answer's size, so an oversized error answer is reported as a failed redemption, not as too large (the upstream's code)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            response = conn.getresponse()\n"
    "            # CRAWLER-BOOT-3: the size first, whatever the status, as upstream: else an oversized\n",
    "            response = conn.getresponse()\n"
    "            if response.status != 200:\n"
    "                raise CrawlerError(CRAWLER_BOOTSTRAP_REDEMPTION_FAILED, \"redeem status\")\n"
    "            # CRAWLER-BOOT-3: the size first, whatever the status, as upstream: else an oversized\n",
)]
KILLS = ["boot.oversize-any-status"]
