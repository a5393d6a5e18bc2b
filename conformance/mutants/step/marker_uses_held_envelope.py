"""The marker write uses the envelope already held instead of re-reading the file first."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            return self.get(force=True)  # STEP-CREDS-6: the marker forces a re-read\n",
    "            return self.get()\n",
)]
KILLS = ["creds.marker-rereads"]
