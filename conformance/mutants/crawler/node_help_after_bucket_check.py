"""The results bucket is checked before the arguments (fail fast on a misdeployed job), so --help needs a configured environment."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    action, session_id = parse_argv(tokens)\n',
    '    if not os.environ.get(RESULTS_BUCKET_ENV):  # fail fast when the job is not deployed right\n'
    '        write_all(2, canonical_bytes({"code": CRAWLER_RESULTS_BUCKET_REQUIRED, "status": STATUS_FAILED}) + b"\\n")\n'
    '        return EXIT_FAILED\n'
    '    action, session_id = parse_argv(tokens)\n',
)]
KILLS = ["node.help"]
