"""An input without a sha256 pin is copied unverified instead of being refused."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if not isinstance(digest, str) or not _SHA256_RE.match(digest):  # STEP-INPUT-1: a pin is required\n",
    "    if digest is not None and (not isinstance(digest, str) or not _SHA256_RE.match(digest)):\n",
), (
    "    return Pins(digest.lower(), size)  # STEP-INPUT-1 (D3): pins compare case-insensitively\n",
    "    return Pins(digest.lower() if digest else None, size)\n",
), (
    "    if digest.hexdigest() != pins.sha256:  # STEP-INPUT-2: the platform checks what a step wrote, not what it read\n",
    "    if pins.sha256 is not None and digest.hexdigest() != pins.sha256:\n",
)]
KILLS = ["input.missing-pin"]
