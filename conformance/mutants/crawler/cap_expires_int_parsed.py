"""X-Goog-Expires is read with int(), which takes "+900", surrounding spaces and non-ASCII digits, instead of ASCII digits only (D6)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "    if not _DIGITS_RE.fullmatch(expires) or len(expires.lstrip(\"0\")) > 4 or not (\n"
    "            1 <= int(expires) <= MAX_URL_EXPIRES_S):  # CRAWLER-CAP-6 (D6): ASCII digits, 1..2100\n",
    "    if not 1 <= int(expires) <= MAX_URL_EXPIRES_S:\n",
)]
KILLS = ["cap.query"]
