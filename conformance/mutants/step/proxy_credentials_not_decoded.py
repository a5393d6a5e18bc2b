"""The proxy URL's user and password go into the Basic credentials as written, still percent-encoded, so a password with a `/` or `%` is refused."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        user = urllib.parse.unquote(parts.username)\n"
    "        password = urllib.parse.unquote(parts.password or \"\")\n",
    "        user = parts.username\n"
    "        password = parts.password or \"\"\n",
)]
KILLS = ["proxy.credentials"]
