"""STORAGE_EMULATOR_HOST may carry a path after its authority."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if parts is None or parts[2] != "":  # CRAWLER-CONFIG-4: nothing after the authority\n',
    '    if parts is None:  # CRAWLER-CONFIG-4: nothing after the authority\n',
)]
KILLS = ["config.endpoints"]
