"""prctl(PR_SET_DUMPABLE, 0) is never called: the node stays dumpable while it holds its tokens and the signed URL."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    disable_dumpability()  # CRAWLER-SECRET-1: right after the bucket, before any secret exists\n',
    '',
)]
KILLS = ["secret.dumpable"]
