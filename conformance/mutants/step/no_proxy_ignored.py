"""NO_PROXY is not read: every request goes through the proxy, even to hosts the platform exempts (an internal store the proxy cannot reach)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        if proxy is None or self.bypass(target.host, target.port):\n",
    "        if proxy is None:\n",
)]
KILLS = ["proxy.no-proxy"]
