"""expires_at is compared with X-Goog-Date + X-Goog-Expires with its fraction, so a broker stamping both from one clock reading is refused."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "    if signed_at > now + CLOCK_SKEW_S or int(expires_at) > url_expires_at:",
    "    if signed_at > now + CLOCK_SKEW_S or expires_at > url_expires_at:",
)]
KILLS = ["cap.window-whole-seconds"]
