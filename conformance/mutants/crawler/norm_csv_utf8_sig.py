"""CSV is decoded as utf-8-sig, so a byte-order mark is silently skipped instead of refused."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    text = io.TextIOWrapper(source, encoding="utf-8", errors="strict", newline="")\n',
    '    text = io.TextIOWrapper(source, encoding="utf-8-sig", errors="strict", newline="")\n',
)]
KILLS = ["norm.encoding"]
