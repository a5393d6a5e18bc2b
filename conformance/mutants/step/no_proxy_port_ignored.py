"""A NO_PROXY entry's `:port` is dropped, so `host:8443` exempts every port of the host."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            if only_port is not None and only_port != port:\n",
    "            if False:\n",
)]
KILLS = ["proxy.no-proxy-miss"]
