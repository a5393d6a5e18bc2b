"""The sha256 pin is compared case-sensitively with hexdigest(), so an uppercase pin never matches."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    return Pins(digest.lower(), size)  # STEP-INPUT-1 (D3): pins compare case-insensitively\n",
    "    return Pins(digest, size)\n",
)]
KILLS = ["input.uppercase-pin"]
