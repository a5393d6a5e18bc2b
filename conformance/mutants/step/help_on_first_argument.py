"""Any command line that begins with --help prints usage and exits 0, so a job launched with --help among other arguments does nothing and writes no marker."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if tokens in ([\"-h\"], [\"--help\"]):",
    "    if tokens[:1] in ([\"-h\"], [\"--help\"]):",
)]
KILLS = ["exit.unexpected-argument"]
