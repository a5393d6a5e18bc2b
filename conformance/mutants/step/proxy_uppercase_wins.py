"""The uppercase proxy variables are read first (os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")), the reverse of urllib's order, and REQUEST_METHOD is not looked at."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    for name, value in environ.items():  # second pass: lowercase names win, empty ones unset\n"
    "        if name.endswith(\"_proxy\"):\n",
    "    for name, value in environ.items():  # second pass: lowercase names win, empty ones unset\n"
    "        if name.endswith(\"_proxy\") and not found.get(name.lower()[:-6]):\n",
), (
    "    if \"REQUEST_METHOD\" in environ:  # a CGI script: HTTP_PROXY may come from a client\n",
    "    if False:\n",
)]
KILLS = ["proxy.variables"]
