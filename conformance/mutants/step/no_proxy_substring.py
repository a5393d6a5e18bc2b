"""A NO_PROXY name matches any host that contains it (a common shortcut), so `calhost` sends localhost's requests past the proxy."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    '            elif host == name or host.endswith("." + name):  # names: whole labels, never a substring\n',
    '            elif name in host:\n',
)]
KILLS = ["proxy.no-proxy-miss"]
