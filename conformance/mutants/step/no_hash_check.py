"""The sha256 pin is never compared with the digest of the bytes read: only the size pin is checked."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if digest.hexdigest() != pins.sha256:  # STEP-INPUT-2: the platform checks what a step wrote, not what it read\n"
    "        raise Permanent(\"%s: sha256 does not match its pin\" % what)\n",
    "",
)]
KILLS = ["input.hash-mismatch", "input.short-body-no-size", "result.on-failure", "result.failure-upload-fails"]
