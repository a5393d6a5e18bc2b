"""Unpinned, the node file is run as its own child without -I -S, so PYTHON* variables, the user site and site.py could shape the normaliser."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    return [executable, "-I", "-S", node_file] + CHILD_ARGS  # CRAWLER-CHILD-1 (D8): -I -S, no PATH lookup\n',
    '    return [executable, node_file] + CHILD_ARGS\n',
)]
KILLS = ["child.argv"]
