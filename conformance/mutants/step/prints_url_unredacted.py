"""Logs each input's URL on stderr as it starts the download, presigned query (token, signature) included."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        url = spec.get(\"get_url\")\n"
    "        if url:  # STEP-INPUT-3: get_url preferred\n",
    "        url = spec.get(\"get_url\")\n"
    "        if url:  # STEP-INPUT-3: get_url preferred\n"
    "            sys.stderr.write(\"%s: fetching %s\\n\" % (PROGRAM, url))\n",
)]
KILLS = ["redact.error-paths", "redact.echoed-url", "redact.userinfo"]
