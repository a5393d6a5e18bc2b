"""Warns whenever both credentials variables are set, even when they name the same file."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if primary and legacy and os.path.normpath(primary) != os.path.normpath(legacy):\n",
    "    if primary and legacy:\n",
)]
KILLS = ["creds.agree-no-warning"]
