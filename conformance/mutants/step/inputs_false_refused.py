"""An inputs that JSON counts as false but is not null ({} or "") is refused as not a list, where the upstream's `inputs or []` read it as none."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if inputs and not isinstance(inputs, list):\n",
    "    if inputs is not None and not isinstance(inputs, list):\n",
)]
KILLS = ["peer.false-lists"]
