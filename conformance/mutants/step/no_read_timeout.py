"""Downloads have no socket timeout (urllib's default), so a store that goes silent mid-body hangs the node."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            with exchange(url, \"reading \" + what, READ_TIMEOUT_S) as session:\n",
    "            with exchange(url, \"reading \" + what, None) as session:\n",
)]
KILLS = ["stream.read-timeout"]
