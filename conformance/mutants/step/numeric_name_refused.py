"""An input named by a number (41) is refused as permanent, where the upstream used its text."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    return name if isinstance(name, str) else str(name)\n",
    "    if not isinstance(name, str):\n"
    "        raise Permanent(\"input %d: its relpath or name is not a string\" % index)\n"
    "    return name\n",
)]
KILLS = ["peer.false-lists"]
