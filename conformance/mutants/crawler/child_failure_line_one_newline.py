"""A failing child's line may end in one \n and nothing else (the pre-issue-20 D14), so a line the upstream strips is CRAWLER_CHILD_FAILED."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    line = stderr.strip()\n',
    '    line = stderr[:-1] if stderr.endswith(b"\\n") else stderr  # one \\n, nothing else\n',
)]
KILLS = ["peer.child-line-spaced"]
