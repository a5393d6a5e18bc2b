"""Scratch is created under a hard-coded /tmp instead of TMPDIR."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        return tempfile.mkdtemp(prefix=PROGRAM + \"-\", dir=parent)\n",
    "        return tempfile.mkdtemp(prefix=PROGRAM + \"-\", dir=\"/tmp\")\n",
)]
KILLS = ["stream.scratch-used"]
