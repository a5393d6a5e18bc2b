"""Classifies by status alone (5xx and 429 transient): a 400 RequestTimeout is called permanent."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    # STEP-HTTP-1: a later attempt may succeed\n    if status >= 500 or status == 429 or any(c in probe for c in RETRYABLE_CODES):\n",
    "    if status >= 500 or status == 429:\n",
)]
KILLS = ["http.request-timeout-post"]
