"""A 429 without a throttling code in its body is permanent: only 5xx statuses and S3 codes are retryable."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if status >= 500 or status == 429 or any(c in probe for c in RETRYABLE_CODES):  # STEP-HTTP-1\n",
    "    if status >= 500 or any(c in probe for c in RETRYABLE_CODES):\n",
)]
KILLS = ["http.too-many-requests-get"]
