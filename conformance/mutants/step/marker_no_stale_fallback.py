"""When the credentials file cannot be re-read for the marker, no marker is written (no stale-envelope fallback)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            if self.held is None:\n"
    "                raise\n",
    "            raise\n",
)]
KILLS = ["creds.file-vanishes"]
