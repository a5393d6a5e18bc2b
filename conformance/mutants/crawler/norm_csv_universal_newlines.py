"""The CSV text is opened without newline="", so universal newlines turn a quoted CRLF into \n before csv sees it."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    text = io.TextIOWrapper(source, encoding="utf-8", errors="strict", newline="")\n',
    '    text = io.TextIOWrapper(source, encoding="utf-8", errors="strict")\n',
)]
KILLS = ["norm.csv"]
