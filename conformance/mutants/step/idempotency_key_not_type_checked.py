"""Any idempotency_key present in the manifest wins, even a number, so the environment's string is not used."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if not (isinstance(key, str) and key.strip()):  # STEP-MANIFEST-4 (D2): only a usable key blocks the fallback\n",
    "    if key is None:\n",
)]
KILLS = ["manifest.identity-types"]
