"""Every HTTP refusal is transient, so that the platform retries; a missing object or a bad request is retried for ever."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    return Permanent(message, status=status)  # STEP-HTTP-1: any other refusal (3xx: see check_status)\n",
    "    return Transient(message, status=status)\n",
)]
KILLS = ["http.no-such-key-get", "http.forbidden-empty-get", "http.conflict-post", "http.bad-request-post",
         "http.long-code", "marker.failed-fields", "manifest.identity-from-env", "manifest.no-identity",
         "exit.codes"]
