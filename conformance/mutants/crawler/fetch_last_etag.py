"""A repeated ETag is recorded as the last one received (a dict of headers keeps the last), not the first."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        "etag": headers.get("ETag"),\n',
    '        "etag": (headers.get_all("ETag") or [None])[-1],\n',
)]
KILLS = ["fetch.evidence"]
