"""The bytecode is written 0644: the node's code readable by anyone who can reach the scratch directory."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)\n',
    '        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)\n',
)]
KILLS = ["isolation.warm-code"]
