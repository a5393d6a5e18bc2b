"""Every run that does not succeed ends with a 'FAILED:' line, a stopped one included: no CANCELLED line."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        say(\"%s: %s\" % (\"CANCELLED\" if stopped else \"FAILED\", reason))\n",
    "        say(\"FAILED: %s\" % reason)\n",
)]
KILLS = ["stop.ack-line"]
