"""Dumpability is disabled once the first identity token has arrived, not before it is asked for."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        raise CrawlerError(CRAWLER_RESULTS_BUCKET_REQUIRED, \"the results bucket is missing or malformed\")\n"
    "    disable_dumpability()  # CRAWLER-SECRET-1: right after the bucket, before any secret exists\n",
    "        raise CrawlerError(CRAWLER_RESULTS_BUCKET_REQUIRED, \"the results bucket is missing or malformed\")\n",
), (
    "            audience = \"%s/%s:redeem\" % (config.audience_base, config.session_id)\n"
    "            token, length = mint_identity_token(config, audience)  # CRAWLER-IDENTITY-2: minted just before the call\n",
    "            audience = \"%s/%s:redeem\" % (config.audience_base, config.session_id)\n"
    "            token, length = mint_identity_token(config, audience)\n"
    "            disable_dumpability()  # now there is a secret to protect\n",
)]
KILLS = ["secret.dumpable"]
