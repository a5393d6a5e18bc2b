"""Checks the environment before the command line (fail fast on a host that gives the worker no credentials), so --help needs TRUF_WORKER_TOKEN."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    try:\n'
    '        config = configure(tokens, os.environ)',
    '    try:\n'
    '        if TOKEN_ENV not in os.environ:  # fail fast when the host gave the worker no credentials\n'
    '            raise UsageError("%s is not set" % TOKEN_ENV)\n'
    '        config = configure(tokens, os.environ)',
)]
KILLS = ["node.help"]
