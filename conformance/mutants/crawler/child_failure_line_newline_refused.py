"""A failing child's line is parsed as written, so the usual trailing \n makes an admissible line CRAWLER_CHILD_FAILED."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    line = stderr[:-1] if stderr.endswith(b"\\n") else stderr  # CRAWLER-CHILD-8 (D14): one \\n, nothing else\n',
    '    line = stderr\n',
)]
KILLS = ["child.admitted-code"]
