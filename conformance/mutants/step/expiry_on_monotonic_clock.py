"""expires_at (wall-clock epoch) is compared with time.monotonic(), so a parsed expiry never looks near."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        return time.time() >= self.expires_at - CREDS_MARGIN_S  # STEP-CREDS-3: within 5 s of expiry\n",
    "        return time.monotonic() >= self.expires_at - CREDS_MARGIN_S\n",
)]
KILLS = ["creds.proactive-refresh", "creds.expires-zulu", "creds.file-vanishes", "input.list-shrinks"]
