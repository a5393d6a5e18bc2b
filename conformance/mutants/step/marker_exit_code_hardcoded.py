"""The marker's exit_code is derived from its status (0 or 1) instead of being the code the process returns."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        \"exit_code\": exit_code,  # STEP-MARKER-3: the code the process returns\n",
    "        \"exit_code\": 0 if status == \"succeeded\" else 1,\n",
)]
KILLS = ["http.no-such-key-get", "http.forbidden-empty-get", "http.conflict-post", "http.bad-request-post",
         "input.missing-pin", "input.no-source", "manifest.no-source", "manifest.identity-from-env",
         "marker.failed-fields", "stop.first-byte", "stop.sigint", "stop.before-manifest", "exit.codes",
         "http.long-code", "input.bad-pin-format", "input.hash-mismatch", "input.oversize-early",
         "input.short-body", "input.short-body-no-size", "input.size-pin-bool", "input.size-pin-negative",
         "input.size-pin-string", "manifest.not-object", "manifest.oversize", "manifest.version-2",
         "manifest.version-bool", "output.bad-relpath.absolute", "output.bad-relpath.backslash",
         "output.bad-relpath.control", "output.bad-relpath.dotdot", "output.bad-relpath.empty-component",
         "redact.echoed-url", "redact.no-traceback", "result.failure-upload-fails", "result.on-failure",
         "stop.ack-line", "stop.after-work", "stop.between-inputs", "stop.connect", "stop.mid-body",
         "stop.only-marker-after", "stop.pid1", "stop.tls-handshake", "stop.upload-answer",
         "stop.upload-body", "stream.scratch-used"]
