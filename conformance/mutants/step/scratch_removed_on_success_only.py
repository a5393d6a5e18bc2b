"""Scratch is removed at the end of a successful run only, not on the failure or stop path."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        try:\n"
    "            status, outcome, reason = self.work()\n"
    "        finally:\n"
    "            if self.scratch:\n",
    "        status, outcome, reason = self.work()\n"
    "        if status == \"succeeded\" and self.scratch:\n",
)]
KILLS = ["stream.scratch-failure", "stream.scratch-used"]
