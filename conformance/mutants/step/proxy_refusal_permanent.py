"""A tunnel the proxy refused is reported as permanent (10), as if the work could never succeed."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    return Transient(\"%s: %s\" % (what, describe(exc)))  # STEP-HTTP-3: DNS, connect, reset, timeout\n",
    "    if isinstance(exc, ProxyRefused):\n"
    "        return Permanent(\"%s: %s\" % (what, describe(exc)))\n"
    "    return Transient(\"%s: %s\" % (what, describe(exc)))  # STEP-HTTP-3: DNS, connect, reset, timeout\n",
)]
KILLS = ["proxy.refused"]
