"""On a stop the child is left to finish (its pipes closed, then waited for) instead of its process group being killed at once."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    """Kill the group, reap, close the pipes: on every path (CRAWLER-CHILD-10)."""\n'
    '    kill_group(proc)\n',
    '    """Reap, close the pipes."""\n'
    '    if not STOP.requested:\n'
    '        kill_group(proc)\n',
)]
KILLS = ["stop.child"]
