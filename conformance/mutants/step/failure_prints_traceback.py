"""A failed run prints its exception's traceback on stderr, as logging.exception would: noise in a public log, and a URL in it is a leak."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        say(\"%s: %s\" % (\"CANCELLED\" if stopped else \"FAILED\", reason))\n",
    "        say(\"%s: %s\" % (\"CANCELLED\" if stopped else \"FAILED\", reason))\n"
    "        __import__(\"traceback\").print_exc()\n",
)]
KILLS = ["redact.no-traceback"]
