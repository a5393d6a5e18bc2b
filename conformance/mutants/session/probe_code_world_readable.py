"""The bytecode is written 0644: the node's code readable by anyone who can reach the scratch directory."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        atomic_write(path, data, durable=False)\n',
    '        atomic_write(path, data, mode=0o644, durable=False)\n',
)]
KILLS = ["isolation.warm-code"]
