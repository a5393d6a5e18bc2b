"""A claim interval written as text is ignored, though the upstream reads it with float()."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "        if isinstance(value, str) and len(value) <= MAX_CONFIG_NUMBER_CHARS:\n",
    "        if False:\n",
)]
KILLS = ["peer.claim-forms"]
