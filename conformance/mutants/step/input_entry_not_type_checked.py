"""Entries of the envelope's inputs list are assumed to be objects: a number crashes as an internal error (transient)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        if not isinstance(spec, dict):  # STEP-CREDS-7: refused when reached\n"
    "            raise Permanent(\"input %d is not an object\" % index)\n",
    "",
)]
KILLS = ["redact.no-traceback"]
