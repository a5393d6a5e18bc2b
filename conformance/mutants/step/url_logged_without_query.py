"""Logs each input's URL with its query cut off (a hand-rolled redaction), leaving user:password@ in place."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            if url:  # STEP-INPUT-3: get_url preferred\n",
    "            if url:  # STEP-INPUT-3: get_url preferred\n"
    "                sys.stderr.write(\"%s: fetching %s\\n\" % (PROGRAM, str(url).split(\"?\")[0]))\n",
)]
KILLS = ["redact.userinfo"]
