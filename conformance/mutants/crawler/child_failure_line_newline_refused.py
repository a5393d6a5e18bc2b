"""A failing child's line is parsed as written, so the usual trailing \n makes an admissible line CRAWLER_CHILD_FAILED."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    line = stderr.strip()\n',
    '    line = stderr\n',
)]
KILLS = ["child.admitted-code"]
