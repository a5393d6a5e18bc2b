"""A size pin written as 6.0 is refused as malformed (the node before issue 20): a platform whose JSON producer writes whole numbers as floats fails every job."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if isinstance(size, float) and size.is_integer():\n"
    "        size = int(size)  # STEP-INPUT-4 (D43): 6.0 is how some JSON producers write 6; the pin still holds\n",
    "",
)]
KILLS = ["peer.size-floats"]
