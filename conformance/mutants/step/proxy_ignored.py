"""The node never uses a proxy: every exchange connects directly, as one written before proxies mattered does, so behind an egress proxy every request fails."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "                               proxies=PROXIES[0] if PROXIES else None)\n",
    "                               proxies=None)\n",
)]
KILLS = ["proxy.tunnel", "proxy.forward", "proxy.credentials"]
