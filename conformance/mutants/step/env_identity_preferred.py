"""The LSPO_* identity variables are preferred to the manifest's identity."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if is_int(value) and value >= 1:\n"
    "        return value\n"
    "    return config.identity[key]  # STEP-MANIFEST-4: the environment's value\n",
    "    if config.identity[key] is not None:\n"
    "        return config.identity[key]\n"
    "    return value if is_int(value) and value >= 1 else None\n",
)]
KILLS = ["manifest.identity-wins"]
