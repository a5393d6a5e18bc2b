"""A failed run writes no result.json: the report is only written when the work succeeded."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    (RESULT_NOT_SENT, \"failed\"): \"upload-first\",  # STEP-RESULT-4: a failed run still reports its facts\n",
    "    (RESULT_NOT_SENT, \"failed\"): \"keep\",\n",
)]
KILLS = ["result.on-failure", "input.hash-mismatch"]
