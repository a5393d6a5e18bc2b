"""A negative size pin is not refused up front; the input is fetched and then fails on its size."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    # STEP-INPUT-4 (D4): a malformed size pin is refused, not ignored: the bound it sets would not hold\n"
    "    if size is not None and (not is_int(size) or size < 0):\n",
    "    if size is not None and not is_int(size):\n",
)]
KILLS = ["input.size-pin-negative"]
