"""A Retry-After of any number of seconds is honoured, so a throttle advises a wait past MAX_RETRY_AFTER_SECONDS."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if value is None or not _RETRY_AFTER_RE.fullmatch(value) or int(value) > MAX_RETRY_AFTER_SECONDS:\n',
    '    if value is None or not value.isdigit() or int(value) == 0:\n',
)]
KILLS = ["progress.settled-facts"]
