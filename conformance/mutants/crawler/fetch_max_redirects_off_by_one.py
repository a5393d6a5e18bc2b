"""The redirect count is compared with >= max_redirects, so a chain of exactly max_redirects redirects is refused."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "                if len(hops) > policy.max_redirects:  # CRAWLER-FETCH-5: one more than allowed\n",
    "                if len(hops) >= policy.max_redirects:\n",
)]
KILLS = ["fetch.redirect-followed"]
