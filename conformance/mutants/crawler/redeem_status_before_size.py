"""The :redeem status is judged before the answer's size, so an oversized error answer is reported as a failed redemption, not as too large (the upstream's code)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            conn.putheader(\"Connection\", \"close\")\n"
    "            conn.endheaders()  # CRAWLER-BOOT-2: sent once, never retried\n"
    "            response = conn.getresponse()\n"
    "            # CRAWLER-BOOT-3: the size first, whatever the status, as upstream: else an oversized\n"
    "            # error answer reaches the broker's :fail as another code than the upstream's\n"
    "            declared = announced_length(response)\n",
    "            conn.putheader(\"Connection\", \"close\")\n"
    "            conn.endheaders()  # CRAWLER-BOOT-2: sent once, never retried\n"
    "            response = conn.getresponse()\n"
    "            if response.status != 200:\n"
    "                raise CrawlerError(CRAWLER_BOOTSTRAP_REDEMPTION_FAILED, \"redeem status\")\n"
    "            # CRAWLER-BOOT-3: the size first, whatever the status, as upstream: else an oversized\n"
    "            # error answer reaches the broker's :fail as another code than the upstream's\n"
    "            declared = announced_length(response)\n",
)]
KILLS = ["boot.oversize-any-status"]
