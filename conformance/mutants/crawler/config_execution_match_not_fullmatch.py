"""CLOUD_RUN_EXECUTION is checked with re.match instead of fullmatch, so only its first character has to fit ('_', a trailing newline or '-' pass)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'if execution is None or not _EXECUTION_RE.fullmatch(execution):',
    'if execution is None or not _EXECUTION_RE.match(execution):',
)]
KILLS = ["config.execution"]
