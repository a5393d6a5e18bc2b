"""An envelope without a usable expires_at is taken to never expire, so it is never re-read."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        if self.expires_at is None:\n"
    "            return True  # STEP-CREDS-3: no usable expires_at, so every access re-reads\n",
    "        if self.expires_at is None:\n"
    "            return False\n",
)]
KILLS = ["creds.expires-garbage", "creds.expires-missing"]
