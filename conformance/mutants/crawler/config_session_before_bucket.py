"""The argument is checked before the environment (argv first feels natural), so a bad session id is named even when the bucket is wrong too (CONFIG-7)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    bucket = environ.get(RESULTS_BUCKET_ENV)\n',
    '    if not is_canonical_uuid(session_id):  # the argument first, then the environment\n'
    '        raise CrawlerError(CRAWLER_JOB_ARGUMENT_INVALID, "the session id is not a canonical UUID")\n'
    '    bucket = environ.get(RESULTS_BUCKET_ENV)\n',
)]
KILLS = ["config.bucket-first"]
