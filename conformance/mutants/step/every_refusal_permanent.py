"""Every HTTP refusal is permanent: no classification of throttling, 5xx or expired credentials."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    probe = detail.lower().replace(\" \", \"\")\n"
    "    message = \"%s: %s\" % (what, detail)\n",
    "    message = \"%s: %s\" % (what, detail)\n"
    "    return Permanent(message, status=status)\n",
)]
KILLS = ["http.slowdown-get", "http.slowdown-post", "http.internal-error-post", "http.too-many-requests-get",
         "http.request-timeout-post", "http.access-denied-post", "http.unauthorized-get",
         "http.unauthorized-rotated", "exit.codes", "fault.manifest.slowdown", "fault.manifest.throttled",
         "fault.manifest.expired", "fault.manifest.expired-rotated", "fault.input.throttled",
         "fault.output.throttled", "fault.output.expired", "fault.output.expired-rotated",
         "fault.result.slowdown", "fault.result.throttled", "fault.result.expired",
         "fault.result.expired-rotated", "creds.at-most-one-retry", "creds.no-retry-unchanged",
         "creds.retry-after-rotation", "creds.same-bytes-no-retry", "fault.marker.expired-rotated"]
