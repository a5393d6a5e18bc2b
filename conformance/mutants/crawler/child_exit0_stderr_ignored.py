"""Stderr is judged only when the child fails: a child that exits 0 may write anything (short of a flood) on stderr."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if output.stderr or output.overflow == "stderr":  # CRAWLER-CHILD-9: silent on stderr\n',
    '    if output.overflow == "stderr":\n',
)]
KILLS = ["child.exit0-stderr"]
