"""The re-exec keeps --token and its value on argv: the running worker's cmdline shows the token."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        elif item == "--token":\n'
    '            skip = True\n',
    '        elif item == "--token-never":\n'
    '            skip = True\n',
)]
KILLS = ["token.off-argv", "secret.process-tree"]
