"""Resolved addresses are never judged public or not: a host name on the allow-list is trusted to resolve somewhere safe."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        if not is_public(address) and not allowed:  # CRAWLER-FETCH-3: any one bad address refuses the hop\n"
    "            raise CrawlerError(CRAWLER_EGRESS_DENIED, \"a non-public address\")\n",
    "",
)]
KILLS = ["fetch.private-address"]
