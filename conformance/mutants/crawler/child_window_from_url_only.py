"""The upload window is taken from X-Goog-Date + X-Goog-Expires alone, ignoring an earlier expires_at."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    window_end = min(expires_at, url_expires_at)  # CRAWLER-CAP-8: the upload window\n',
    '    window_end = url_expires_at\n',
)]
KILLS = ["child.window-insufficient"]
