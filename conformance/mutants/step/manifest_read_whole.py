"""The manifest is read whole with response.read() and only then compared with the 8 MiB ceiling."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        if response.length is not None and response.length > limit:  # STEP-MANIFEST-2: refused unread\n"
    "            raise Permanent(\"%s: %d bytes announced, more than the %d allowed\" % (what, response.length, limit))\n"
    "        data = bytearray()\n"
    "        try:\n"
    "            while True:\n"
    "                chunk = response.read(min(CHUNK_BYTES, limit + 1 - len(data)))\n"
    "                if not chunk:\n"
    "                    break\n"
    "                data += chunk\n"
    "                if len(data) > limit:  # STEP-MANIFEST-2: stop reading past the ceiling\n"
    "                    raise Permanent(\"%s: more than %d bytes; stopped reading\" % (what, limit))\n",
    "        try:\n"
    "            data = response.read()\n"
    "            if len(data) > limit:\n"
    "                raise Permanent(\"%s: more than %d bytes\" % (what, limit))\n",
)]
KILLS = ["manifest.oversize"]
