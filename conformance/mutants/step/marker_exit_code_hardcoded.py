"""The marker's exit_code is derived from its status (0 or 1) instead of being the code the process returns."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        \"exit_code\": exit_code,  # STEP-MARKER-3: the code the process returns\n",
    "        \"exit_code\": 0 if status == \"succeeded\" else 1,\n",
)]
KILLS = ["http.no-such-key-get", "http.forbidden-empty-get", "http.conflict-post", "http.bad-request-post",
         "input.missing-pin", "input.no-source", "manifest.no-source", "manifest.identity-from-env",
         "marker.failed-fields", "stop.first-byte", "stop.sigint", "stop.before-manifest"]
