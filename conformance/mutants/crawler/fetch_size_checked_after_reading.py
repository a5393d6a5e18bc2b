"""The body is read to its end (only the first max_source_bytes spooled) and its size compared with the limit afterwards."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            count = response.readinto(view[:min(len(view), limit + 1 - size)])\n",
    "            count = response.readinto(view)\n",
), (
    "            if size > limit:  # CRAWLER-FETCH-6: stopped at max_source_bytes + 1\n"
    "                raise CrawlerError(CRAWLER_SOURCE_TOO_LARGE, \"over max_source_bytes\")\n",
    "            if size > limit:\n"
    "                continue  # keep draining; judged once the body has ended\n",
), (
    "            write_all_checked(spool_fd, view[:count])\n"
    "    if STOP.should_abandon():  # a stop's shutdown() reads as the end of the body\n",
    "            write_all_checked(spool_fd, view[:count])\n"
    "    if size > limit:\n"
    "        raise CrawlerError(CRAWLER_SOURCE_TOO_LARGE, \"over max_source_bytes\")\n"
    "    if STOP.should_abandon():  # a stop's shutdown() reads as the end of the body\n",
)]
KILLS = ["fetch.too-large-streamed"]
