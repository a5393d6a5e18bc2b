"""A Retry-After above MAX_RETRY_AFTER_SECONDS is honoured instead of counting as none."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if value is None or not _RETRY_AFTER_RE.fullmatch(value) or int(value) > MAX_RETRY_AFTER_SECONDS:\n',
    '    if value is None or not _RETRY_AFTER_RE.fullmatch(value):\n',
)]
KILLS = ["backoff.retry-after"]
