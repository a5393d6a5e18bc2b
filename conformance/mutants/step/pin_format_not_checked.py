"""The sha256 pin is only required to be a string; a malformed one is discovered after the download, by the mismatch."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if not isinstance(digest, str) or not _SHA256_RE.match(digest):  # STEP-INPUT-1: a pin is required\n",
    "    if not isinstance(digest, str):\n",
)]
KILLS = ["input.bad-pin-format"]
