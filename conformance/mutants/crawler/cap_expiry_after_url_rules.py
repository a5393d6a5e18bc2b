"""Expiry is checked with the window (after CAP-5..8) rather than right after CAP-3, so an expired capability with a bad URL is INVALID."""
NODE = "nodes/crawler_job.py"
REPLACE = [
    ("    if now >= expires_at:  # CRAWLER-CAP-4: after CAP-1..3, before CAP-5..9\n"
     "        raise CrawlerError(CRAWLER_UPLOAD_CAPABILITY_EXPIRED, \"expires_at has passed\")\n",
     ""),
    ("    if session_id != config.session_id:  # CRAWLER-CAP-9: after CAP-1..8, and reported on :fail\n",
     "    if now >= expires_at:\n"
     "        raise CrawlerError(CRAWLER_UPLOAD_CAPABILITY_EXPIRED, \"expires_at has passed\")\n"
     "    if session_id != config.session_id:  # CRAWLER-CAP-9: after CAP-1..8, and reported on :fail\n"),
]
KILLS = ["cap.expired"]
