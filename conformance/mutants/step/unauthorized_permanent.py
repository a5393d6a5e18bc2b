"""A bare 401 is not credential-class: only 400/403 with an expired-looking code is, so 401 is permanent and never retried."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    # STEP-HTTP-2 (D8): expired-looking: re-read the envelope\n    if status == 401 or (status in (400, 403) and any(c in probe for c in EXPIRED_CODES)):\n",
    "    if status in (400, 403) and any(c in probe for c in EXPIRED_CODES):\n",
)]
KILLS = ["http.unauthorized-get", "http.unauthorized-rotated"]
