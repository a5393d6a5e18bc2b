"""CONNECT carries no Proxy-Authorization although the proxy URL has a user and password: an authenticating proxy refuses every tunnel."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if proxy.authorization is not None:\n"
    "        head += \"Proxy-Authorization: %s\\r\\n\" % proxy.authorization\n",
    "",
)]
KILLS = ["proxy.credentials"]
