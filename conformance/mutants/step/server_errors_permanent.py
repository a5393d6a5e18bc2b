"""Only 429 is retryable: a 5xx (SlowDown, InternalError, ServiceUnavailable) is called permanent."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    # STEP-HTTP-1: a later attempt may succeed\n    if status >= 500 or status == 429 or any(c in probe for c in RETRYABLE_CODES):\n",
    "    if status == 429:\n",
)]
KILLS = ["http.slowdown-get", "http.slowdown-post", "http.internal-error-post", "http.request-timeout-post",
         "exit.codes", "fault.manifest.slowdown", "fault.result.slowdown"]
