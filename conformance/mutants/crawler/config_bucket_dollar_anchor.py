"""The bucket is matched with re.match and a `$` anchor instead of fullmatch, and `$` also matches before a trailing newline."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'if bucket is None or not _BUCKET_RE.fullmatch(bucket):',
    'if bucket is None or not re.match(_BUCKET_RE.pattern + "$", bucket):',
)]
KILLS = ["config.bucket-first"]
