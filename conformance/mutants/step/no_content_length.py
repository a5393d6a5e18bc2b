"""The upload is sent without a Content-Length header (the body is streamed and its length never announced)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            session.conn.putheader(\"Content-Length\", str(len(head) + payload.size + len(tail)))  # STEP-OUTPUT-3: exact, never chunked\n",
    "",
)]
KILLS = ["output.multipart", "fault.manifest.dribble", "fault.input.dribble", "fault.output.dribble",
         "fault.result.dribble", "fault.marker.dribble", "creds.agree-no-warning", "creds.legacy-variable",
         "creds.precedence", "exit.codes", "fault.input.throttled", "fault.manifest.expired-rotated",
         "fault.manifest.reset", "fault.manifest.slowdown", "fault.manifest.throttled", "fault.marker.reset",
         "fault.marker.slowdown", "fault.marker.throttled", "fault.output.reset", "fault.output.throttled",
         "fault.result.reset", "fault.result.slowdown", "fault.result.throttled", "http.access-denied-post",
         "http.bad-request-post", "http.conflict-post", "http.connection-refused",
         "http.forbidden-empty-get", "http.internal-error-post", "http.no-such-key-get",
         "http.request-timeout-post", "http.reset-get", "http.slowdown-get", "http.slowdown-post",
         "http.too-many-requests-get", "http.unauthorized-get", "input.hash-mismatch", "input.missing-pin",
         "work.names", "input.no-source", "input.short-body", "input.tls", "input.uppercase-pin",
         "manifest.identity-from-env", "manifest.identity-types", "manifest.identity-wins",
         "manifest.no-source", "manifest.oversize", "manifest.xml-error-page", "marker.failed-fields",
         "marker.last", "marker.produced-ports", "marker.refused-404", "marker.refused-500", "marker.shape",
         "output.accept-then-reset", "output.bad-relpath.absolute", "output.bad-relpath.backslash",
         "output.bad-relpath.control", "output.bad-relpath.dotdot", "output.bad-relpath.empty-component",
         "work.copy", "work.name-clash", "output.redirect-upload", "output.reset-mid-upload",
         "progress.flushed", "progress.order", "result.fact-rules", "result.failure-upload-fails",
         "result.params-ceiling", "result.shape", "stop.before-manifest", "stop.connect", "stop.first-byte",
         "stop.mid-body", "stop.only-marker-after", "stop.pid1", "stop.sigint", "stop.tls-handshake",
         "stream.scratch-failure", "stream.scratch-success"]
