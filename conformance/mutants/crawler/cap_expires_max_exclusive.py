"""X-Goog-Expires is bounded with < 2100 instead of <= 2100, refusing the largest value the contract allows."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "            1 <= int(expires) <= MAX_URL_EXPIRES_S):  # CRAWLER-CAP-6 (D6): ASCII digits, 1..2100\n",
    "            1 <= int(expires) < MAX_URL_EXPIRES_S):\n",
)]
KILLS = ["cap.accepted"]
