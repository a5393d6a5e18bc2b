"""The re-exec keeps TRUF_WORKER_TOKEN in the environment: /proc/<pid>/environ still shows it."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    environment = dict((k, v) for k, v in environ.items() if k != TOKEN_ENV)\n',
    '    environment = dict(environ)\n',
)]
KILLS = ["token.off-argv"]
