"""The child's environment starts from a copy of the node's (os.environ) with the six pins added, instead of from nothing."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    environment = dict(CHILD_THREAD_PINS)\n',
    '    environment = dict(os.environ)\n    environment.update(CHILD_THREAD_PINS)\n',
)]
KILLS = ["child.env"]
