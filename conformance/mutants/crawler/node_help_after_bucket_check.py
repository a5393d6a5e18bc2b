"""The results bucket is checked before the arguments (fail fast on a misdeployed job), so --help needs a configured environment."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    session_id = parse_argv(tokens)\n',
    '    if not environ.get(RESULTS_BUCKET_ENV):  # fail fast when the job is not deployed right\n'
    '        line = status_line(CRAWLER_RESULTS_BUCKET_REQUIRED).decode("ascii")\n'
    '        raise UsageError(CRAWLER_RESULTS_BUCKET_REQUIRED, line, EXIT_FAILED)\n'
    '    session_id = parse_argv(tokens)\n',
)]
KILLS = ["node.help"]
