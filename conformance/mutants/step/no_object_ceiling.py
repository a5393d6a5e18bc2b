"""There is no 1 GiB object ceiling: an input over 1 GiB is downloaded and its copy uploaded (and refused by the store)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if size is not None and size > MAX_OBJECT_BYTES:  # STEP-OUTPUT-4: refused before any transfer\n"
    "        raise Permanent(\"%s is pinned at %d bytes, over the 1 GiB object ceiling\" % (label, size))\n",
    "",
), (
    "        if size > MAX_OBJECT_BYTES:  # STEP-OUTPUT-4: its copy could never be written (D33)\n"
    "            raise Permanent(\"%s: over the 1 GiB object ceiling; stopped reading\" % what)\n",
    "",
), (
    "        if payload.size > MAX_OBJECT_BYTES:  # STEP-OUTPUT-4: before any transfer\n"
    "            raise Permanent(\"%s is %d bytes, over the 1 GiB object ceiling\" % (relpath, payload.size))\n",
    "",
)]
KILLS = ["output.too-large"]
