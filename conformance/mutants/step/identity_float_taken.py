"""An identity number the manifest writes as 41.0 is taken as it is, so the marker carries 41.0 where the collector reads integers (the upstream took the environment's value)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    value = manifest.get(key) if isinstance(manifest, dict) else None\n    if is_int(value) and value >= 1:\n",
    "    value = manifest.get(key) if isinstance(manifest, dict) else None\n"
    "    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1:\n",
)]
KILLS = ["peer.identity-floats"]
