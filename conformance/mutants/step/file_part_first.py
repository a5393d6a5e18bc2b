"""The multipart body puts the file part first and the policy fields after it (S3 ignores fields after the file)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    head = bytearray()\n"
    "    for name, value in multipart_parts(post, key):\n"
    "        head += ('--%s",
    "    head = bytearray()\n"
    "    fields = bytearray()\n"
    "    for name, value in multipart_parts(post, key):\n"
    "        fields += ('--%s",
), (
    "        head += str(value).encode(\"utf-8\") + b\"\\r\\n\"\n",
    "        fields += str(value).encode(\"utf-8\") + b\"\\r\\n\"\n",
), (
    "    tail = (\"\\r\\n--%s--\\r\\n\" % boundary).encode(\"ascii\")\n",
    "    tail = b\"\\r\\n\" + bytes(fields) + (\"--%s--\\r\\n\" % boundary).encode(\"ascii\")\n",
)]
KILLS = ["output.multipart", "creds.agree-no-warning", "creds.legacy-variable", "creds.precedence",
         "exit.codes", "fault.input.dribble", "fault.input.throttled", "fault.manifest.dribble",
         "fault.manifest.expired-rotated", "fault.manifest.reset", "fault.manifest.slowdown",
         "fault.manifest.throttled", "fault.marker.dribble", "fault.marker.reset", "fault.marker.slowdown",
         "fault.marker.throttled", "fault.output.dribble", "fault.output.reset", "fault.output.throttled",
         "fault.result.dribble", "fault.result.reset", "fault.result.slowdown", "fault.result.throttled",
         "http.access-denied-post", "http.bad-request-post", "http.conflict-post", "http.connection-refused",
         "http.forbidden-empty-get", "http.internal-error-post", "http.no-such-key-get",
         "http.request-timeout-post", "http.reset-get", "http.slowdown-get", "http.slowdown-post",
         "http.too-many-requests-get", "http.unauthorized-get", "input.hash-mismatch", "input.missing-pin",
         "work.names", "input.no-source", "input.short-body", "input.tls", "input.uppercase-pin",
         "manifest.identity-from-env", "manifest.identity-types", "manifest.identity-wins",
         "manifest.no-source", "manifest.oversize", "manifest.xml-error-page", "marker.failed-fields",
         "marker.last", "marker.produced-ports", "marker.refused-404", "marker.refused-500", "marker.shape",
         "output.accept-then-reset", "output.bad-relpath.absolute", "output.bad-relpath.backslash",
         "output.bad-relpath.control", "output.bad-relpath.dotdot", "output.bad-relpath.empty-component",
         "work.copy", "work.name-clash", "output.reset-mid-upload", "progress.flushed", "progress.order",
         "result.fact-rules", "result.failure-upload-fails", "result.on-failure", "result.params-ceiling",
         "result.shape", "stop.before-manifest", "stop.connect", "stop.first-byte", "stop.mid-body",
         "stop.only-marker-after", "stop.pid1", "stop.sigint", "stop.tls-handshake", "stream.scratch-success"]
