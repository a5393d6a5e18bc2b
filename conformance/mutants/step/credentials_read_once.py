"""The envelope is read once at start-up and held; it is re-read only after a refusal, never near its expiry."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        # STEP-CREDS-3/-4: near expiry or after a refusal, open the path again (a rename replaced it)\n        if force or self.held is None or self.stale():\n",
    "        if force or self.held is None:\n",
)]
KILLS = ["creds.proactive-refresh", "creds.expires-garbage", "creds.expires-missing", "creds.expires-zulu",
         "creds.file-vanishes", "input.list-shrinks"]
