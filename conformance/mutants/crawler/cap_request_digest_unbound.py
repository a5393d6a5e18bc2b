"""request_digest is checked for its form only, never against the served request's digest (the signed headers bind it anyway, a node might think)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "not _DIGEST_RE.fullmatch(bound) or bound != request_digest:",
    "not _DIGEST_RE.fullmatch(bound):",
)]
KILLS = ["cap.digest-binding"]
