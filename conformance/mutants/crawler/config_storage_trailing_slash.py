"""STORAGE_EMULATOR_HOST with a trailing '/' is accepted (an origin "with its root path" looks the same), though CONFIG-4 wants exactly https://host[:port]."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'if parts is None or parts[2] != "":  # CRAWLER-CONFIG-4: nothing after the authority',
    'if parts is None or parts[2] not in ("", "/"):  # nothing after the authority but its root',
)]
KILLS = ["config.endpoints"]
