"""A proxy variable must begin with http:// (the node before issue 20): `user:pw@proxy:3128`, which urllib read as an http proxy, fails the run at start-up."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    scheme, colon, rest = url.partition(\":\")\n"
    "    if not (colon and scheme and \"/\" not in scheme and rest.startswith(\"/\")):\n"
    "        # urllib's reading: no `scheme:/`, so the value is [user:password@]host[:port] (or //host...)\n"
    "        url = (\"http:\" if url.startswith(\"//\") else \"http://\") + url\n",
    "",
)]
KILLS = ["peer.proxy-forms"]
