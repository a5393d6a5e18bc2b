"""The bootstrap bases accept http:// as the storage origin does, so the identity token could travel in clear text."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    """A bootstrap base (CRAWLER-CONFIG-2), or None."""\n    parts = split_https(value)\n',
    '    """A bootstrap base (CRAWLER-CONFIG-2), or None."""\n'
    '    parts = split_https(value, "http" if str(value).startswith("http://") else "https")\n',
)]
KILLS = ["config.base-rules"]
