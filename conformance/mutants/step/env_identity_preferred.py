"""The LSPO_* identity variables are preferred to the manifest's identity."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        value = manifest.get(key)\n"
    "        if not (is_int(value) and value >= 1):\n"
    "            value = config.identity[key]  # STEP-MANIFEST-4: the environment's value\n",
    "        value = config.identity[key]\n"
    "        if value is None:\n"
    "            value = manifest.get(key) if is_int(manifest.get(key)) and manifest.get(key) >= 1 else None\n",
)]
KILLS = ["manifest.identity-wins"]
