"""A failing child's stderr is passed through to the node's stderr, so an operator sees why the normaliser failed."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if output.returncode != 0:  # CRAWLER-CHILD-8: non-zero, or killed by a signal (negative)\n',
    '    if output.returncode != 0:\n'
    '        write_all(2, output.stderr)  # the child\'s own words, for the operator\n',
)]
KILLS = ["report.no-detail"]
