"""NO_PROXY is matched as text, as urllib does: an address entry matches any host ending with a dot and it, so `0.0.1` exempts 127.0.0.1."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            if address is not None or entry_address is not None:\n"
    "                if address == entry_address:  # addresses: only the same address\n"
    "                    return True\n"
    "            elif host == name",
    "            if host == name or host.endswith(\".\" + name):\n"
    "                return True\n"
    "            elif host == name",
)]
KILLS = ["proxy.no-proxy-miss"]
