"""An explicit :443 on a base is accepted (it is the https default, so it looks harmless), though CONFIG-2 (D3) allows one spelling only."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'if port is not None and (port == default_port or not 1 <= port <= 65535):',
    'if port is not None and not 1 <= port <= 65535:',
)]
KILLS = ["config.base-rules"]
