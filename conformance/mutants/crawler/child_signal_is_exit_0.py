"""Only a positive exit status counts as a failure: a child killed by a signal (negative returncode) is judged like exit 0."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if output.returncode != 0:  # CRAWLER-CHILD-8: non-zero, or killed by a signal (negative)\n',
    '    if output.returncode > 0:\n',
)]
KILLS = ["child.signal"]
