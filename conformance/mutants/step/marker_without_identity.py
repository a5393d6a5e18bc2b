"""A marker is written even when no identity is known, with null identity fields."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        if identity is None:\n"
    "            # STEP-MARKER-6: a receipt without identity would be taken for another attempt's\n            say(\"no completion marker: %s\" % why)\n"
    "            return MARKER_NONE\n",
    "        if identity is None:\n"
    "            say(\"completion marker without identity: %s\" % why)\n"
    "            identity = {\"execution_id\": None, \"attempt\": None, \"generation\": None, \"idempotency_key\": None}\n",
)]
KILLS = ["manifest.no-identity", "manifest.env-identity-digits"]
