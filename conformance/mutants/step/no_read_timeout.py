"""Downloads have no socket timeout (urllib's default), so a store that goes silent mid-body hangs the node."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "                session = stack.enter_context(exchange(url, reading, READ_TIMEOUT_S))\n",
    "                session = stack.enter_context(exchange(url, reading, None))\n",
)]
KILLS = ["stream.read-timeout"]
