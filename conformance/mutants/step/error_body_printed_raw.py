"""Prints the store's error body on stderr as it arrives, for debugging, without redacting it."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        body = response.read(ERROR_BODY_BYTES)  # STEP-HTTP-5: at most 4096 bytes of an error body\n",
    "        body = response.read(ERROR_BODY_BYTES)  # STEP-HTTP-5: at most 4096 bytes of an error body\n"
    "        sys.stderr.write(\"%s: the store answered %d: %s\\n\" % (PROGRAM, status, body.decode(\"utf-8\", \"replace\")))\n",
)]
KILLS = ["redact.echoed-url", "marker.failed-fields"]
