"""The envelope is read once at start-up and held; it is re-read only after a refusal, never near its expiry."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        if force or self.held is None or self.stale():  # STEP-CREDS-3, STEP-CREDS-4\n",
    "        if force or self.held is None:\n",
)]
KILLS = ["creds.proactive-refresh", "creds.expires-garbage", "creds.expires-missing", "creds.expires-zulu",
         "creds.file-vanishes", "input.list-shrinks"]
