"""The failure path sends result.json again after its normal-path write ended without an answer, as the upstream did: two writes of one key, no defined winner."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    (RESULT_UNKNOWN, \"failed\"): \"keep\",",
    "    (RESULT_UNKNOWN, \"failed\"): \"upload-first\",",
)]
KILLS = ["result.ambiguous-listed"]
