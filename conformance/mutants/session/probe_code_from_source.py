"""Every probe child compiles the node file again: the session never starts one from its bytecode (D54)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    program = code.path()  # D54: the node\'s bytecode, else the node file\n',
    '    program = node\n',
)]
KILLS = ["isolation.warm-code"]
