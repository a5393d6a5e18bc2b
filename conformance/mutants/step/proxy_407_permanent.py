"""A 407 answered through a plain-HTTP proxy is classified like any other 4xx, permanent (10), as the upstream did."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if status == 407:  # STEP-PROXY-4 (D41): only a proxy sends it; its settings, not the work, are at fault\n"
    "        return Transient(message, status=status)\n",
    "",
)]
KILLS = ["proxy.refused"]
