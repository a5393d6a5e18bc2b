"""is_int() is isinstance(value, int), so JSON true passes as the integer 1 everywhere (versions, size pins, identity)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    return isinstance(value, int) and not isinstance(value, bool)\n",
    "    return isinstance(value, int)\n",
)]
KILLS = ["creds.startup-version-bool", "manifest.version-bool", "input.size-pin-bool", "manifest.identity-types"]
