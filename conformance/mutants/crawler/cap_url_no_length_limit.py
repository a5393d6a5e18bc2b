"""upload_url is only required to be non-empty printable ASCII; the 16384-character bound is forgotten."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "not 1 <= len(url) <= 16384 or not _PRINTABLE_RE.fullmatch(url):",
    "not url or not _PRINTABLE_RE.fullmatch(url):",
)]
KILLS = ["cap.url"]
