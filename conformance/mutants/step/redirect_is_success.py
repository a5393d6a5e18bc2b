"""Any status below 400 counts as success, so a 3xx redirect is taken for the answer."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    status = response.status\n"
    "    if 200 <= status < 300:\n"
    "        return\n",
    "    status = response.status\n"
    "    if 200 <= status < 400:\n"
    "        return\n",
)]
KILLS = ["output.redirect-upload", "output.redirect-get"]
