"""Every copy goes to outputs/<name>; two inputs with the same name collide."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        candidate = \"%s/%s\" % (OUTPUT_DIR, name)\n"
    "        if candidate in self.taken:\n",
    "        candidate = \"%s/%s\" % (OUTPUT_DIR, name)\n"
    "        if False:\n",
)]
KILLS = ["work.name-clash", "output.unique-relpaths"]
