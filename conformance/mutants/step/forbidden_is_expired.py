"""Every 400 and 403 is taken for expired credentials, whatever its code (or none)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    # STEP-HTTP-2 (D8): expired-looking: re-read the envelope\n    if status == 401 or (status in (400, 403) and any(c in probe for c in EXPIRED_CODES)):\n",
    "    if status in (400, 401, 403):\n",
)]
KILLS = ["http.forbidden-empty-get", "http.bad-request-post", "marker.failed-fields"]
