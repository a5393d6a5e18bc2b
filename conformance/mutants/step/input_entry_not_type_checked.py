"""Entries of the envelope's inputs list are assumed to be objects: a number crashes as an internal error (transient), as in the upstream."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        if not isinstance(spec, dict):  # STEP-CREDS-7 (D38): permanent, not a crash that advises a retry\n"
    "            raise Permanent(\"input %d is not an object\" % index)\n",
    "",
)]
KILLS = ["creds.malformed-inputs"]
