"""The window check only compares expires_at with the URL's expiry; an X-Goog-Date far in the future is not refused."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    # CRAWLER-CAP-8 (D7): else the run would count on time the signed URL does not give\n'
    '    if signed_at > now + CLOCK_SKEW_S or expires_at > url_expires_at:\n',
    "    if expires_at > url_expires_at:\n",
)]
KILLS = ["cap.window"]
