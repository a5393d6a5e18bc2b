"""A 3xx without Location is not refused: a redirect status is simply followed (to urljoin(url, None), the same URL) until max_redirects."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            if 300 <= response.status < 400 and not location:  # CRAWLER-FETCH-5: a 3xx without Location\n"
    "                raise CrawlerError(CRAWLER_SOURCE_REDIRECT_DENIED, \"a redirect without Location\")\n",
    "",
)]
KILLS = ["fetch.redirect-denied"]
