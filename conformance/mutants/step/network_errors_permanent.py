"""A network error (refused, reset, timed out) is called permanent: the node blames the URL, not the network."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    return Transient(\"%s: %s\" % (what, describe(exc)))  # STEP-HTTP-3: DNS, connect, reset, timeout\n",
    "    return Permanent(\"%s: %s\" % (what, describe(exc)))\n",
)]
KILLS = ["http.reset-get", "http.connection-refused", "fault.manifest.reset"]
