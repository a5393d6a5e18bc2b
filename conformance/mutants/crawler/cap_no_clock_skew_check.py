"""The window check only compares expires_at with the URL's expiry; an X-Goog-Date far in the future is not refused."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if signed_at > now + CLOCK_SKEW_S or int(expires_at) > url_expires_at:\n',
    "    if int(expires_at) > url_expires_at:\n",
)]
KILLS = ["cap.window"]
