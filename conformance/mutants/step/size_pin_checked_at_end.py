"""The size pin is compared only once the body has been read to its end, so an oversize body is downloaded whole."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        if pins.size is not None and size > pins.size:  # STEP-INPUT-2: oversize refused at once, not read to the end\n"
    "            raise Permanent(\"%s: more bytes than its size pin of %d; stopped reading\" % (what, pins.size))\n",
    "",
)]
KILLS = ["input.oversize-early"]
