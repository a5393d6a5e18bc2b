"""Logs each input's URL on stderr as it starts the download, presigned query (token, signature) included."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        url = spec.get(\"get_url\")\n"
    "        if url:  # STEP-INPUT-3: get_url preferred\n",
    "        url = spec.get(\"get_url\")\n"
    "        if url:  # STEP-INPUT-3: get_url preferred\n"
    "            sys.stderr.write(\"%s: fetching %s\\n\" % (PROGRAM, url))\n",
)]
KILLS = ["redact.error-paths", "redact.echoed-url", "redact.userinfo", "creds.agree-no-warning",
         "creds.at-most-one-retry", "creds.expires-garbage", "creds.expires-missing", "creds.expires-zulu",
         "creds.file-vanishes", "creds.legacy-variable", "creds.marker-rereads", "creds.no-retry-unchanged",
         "creds.precedence", "creds.proactive-refresh", "creds.retry-after-rotation",
         "creds.same-bytes-no-retry", "exit.codes", "fault.input.dribble", "fault.input.throttled",
         "fault.manifest.dribble", "fault.manifest.expired-rotated", "fault.marker.dribble",
         "fault.marker.expired", "fault.marker.expired-rotated", "fault.marker.reset",
         "fault.marker.slowdown", "fault.marker.throttled", "fault.output.dribble", "fault.output.expired",
         "fault.output.expired-rotated", "fault.output.reset", "fault.output.throttled",
         "fault.result.dribble", "fault.result.expired", "fault.result.expired-rotated",
         "fault.result.reset", "fault.result.slowdown", "fault.result.throttled", "http.access-denied-post",
         "http.bad-request-post", "http.conflict-post", "http.connection-refused",
         "http.forbidden-empty-get", "http.internal-error-post", "http.long-code", "http.no-such-key-get",
         "http.request-timeout-post", "http.reset-get", "http.slowdown-get", "http.slowdown-post",
         "http.too-many-requests-get", "http.unauthorized-get", "http.unauthorized-rotated",
         "http.user-agent", "input.hash-mismatch", "input.list-shrinks", "work.names",
         "input.oversize-early", "input.short-body", "input.short-body-no-size", "input.tls",
         "input.uppercase-pin", "manifest.identity-types", "manifest.identity-wins", "marker.failed-fields",
         "marker.last", "marker.produced-ports", "marker.refused-404", "marker.refused-500", "marker.shape",
         "output.accept-then-reset", "output.bad-relpath.absolute", "output.bad-relpath.backslash",
         "output.bad-relpath.control", "output.bad-relpath.dotdot", "output.bad-relpath.empty-component",
         "work.copy", "output.multipart", "work.name-clash", "output.redirect-get",
         "output.redirect-upload", "output.reset-mid-upload", "progress.format", "progress.order",
         "result.fact-rules", "result.failure-upload-fails", "result.on-failure", "result.params-ceiling",
         "result.shape", "stop.ack-line", "stop.after-work", "stop.between-inputs", "stop.first-byte",
         "stop.mid-body", "stop.only-marker-after", "stop.pid1", "stop.sigint", "stop.tls-handshake",
         "stop.upload-answer", "stop.upload-body", "stream.scratch-failure", "stream.scratch-success",
         "stream.scratch-used"]
