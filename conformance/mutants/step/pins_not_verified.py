"""The input is trusted once the transport says it is complete: neither pin is compared at the end of the stream."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if pins.size is not None and size != pins.size:\n"
    "        raise Permanent(\"%s: %d bytes, but its size pin says %d\" % (what, size, pins.size))\n"
    "    if digest.hexdigest() != pins.sha256:  # STEP-INPUT-2: the platform checks what a step wrote, not what it read\n"
    "        raise Permanent(\"%s: sha256 does not match its pin\" % what)\n",
    "",
)]
KILLS = ["input.hash-mismatch", "input.short-body", "input.short-body-no-size", "result.on-failure",
         "result.failure-upload-fails"]
