"""A redirect from the metadata server is followed to its Location (the metadata server "moved"), instead of being UNAVAILABLE (IDENTITY-3)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            response = conn.getresponse()\n"
    "            if response.status != 200:  # CRAWLER-IDENTITY-3: a redirect is never followed\n",
    "            response = conn.getresponse()\n"
    "            location = response.getheader(\"Location\")\n"
    "            if response.status in REDIRECT_STATUSES and location:  # the metadata server moved: ask there\n"
    "                moved = config._replace(metadata_host=urllib.parse.urlsplit(location).netloc)\n"
    "                return mint_identity_token(moved, audience)\n"
    "            if response.status != 200:\n",
)]
KILLS = ["identity.redirect"]
