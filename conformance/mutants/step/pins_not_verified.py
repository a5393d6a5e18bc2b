"""The input is trusted once the transport says it is complete: verify() is never called."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            digest, size = self.with_refresh(attempt, what)\n"
    "            verify(what, pins, digest, size)\n",
    "            digest, size = self.with_refresh(attempt, what)\n",
)]
KILLS = ["input.hash-mismatch", "input.short-body", "input.short-body-no-size", "result.on-failure",
         "result.failure-upload-fails"]
