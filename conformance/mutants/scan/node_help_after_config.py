"""Reads the trees' location before the command line (fail fast on a misdeployed host), so --help needs HOME or the XDG variables."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    try:\n'
    '        config, tokens = configure(argv)\n',
    '    try:\n'
    '        tree_paths(os.environ)  # fail fast when the host gives the worker nowhere to keep its state\n'
    '        config, tokens = configure(argv)\n',
)]
KILLS = ["node.help"]
