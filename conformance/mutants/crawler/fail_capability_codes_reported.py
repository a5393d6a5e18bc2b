"""The two capability codes go to :fail too (a bad or expired capability is the broker's doing, so tell the broker), though FAIL-1 allows three codes only."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID, CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE,\n'
    '        CRAWLER_UPLOAD_CAPABILITY_INVALID, CRAWLER_UPLOAD_CAPABILITY_EXPIRED, CRAWLER_UPLOAD_FAILED)]\n'
    '    + [(code, FAIL_ROUTE) for code in (\n',
    '        CRAWLER_BOOTSTRAP_CONFIGURATION_INVALID, CRAWLER_WORKLOAD_IDENTITY_UNAVAILABLE,\n'
    '        CRAWLER_UPLOAD_FAILED)]\n'
    '    + [(code, FAIL_ROUTE) for code in (\n'
    '        CRAWLER_UPLOAD_CAPABILITY_INVALID, CRAWLER_UPLOAD_CAPABILITY_EXPIRED,\n',
)]
KILLS = ["fail.allowlist"]
