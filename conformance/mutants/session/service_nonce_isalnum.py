"""The lease nonce is checked as the upstream does, with str.isalnum(): non-ASCII letters pass (D15)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            and isinstance(doc["lease_nonce"], str) and _NONCE_RE.fullmatch(doc["lease_nonce"])  # D15: ASCII\n',
    '            and isinstance(doc["lease_nonce"], str) and 32 <= len(doc["lease_nonce"]) <= 128\n'
    '            and doc["lease_nonce"].replace("_", "a").replace("-", "a").isalnum()\n',
)]
KILLS = ["service.start-body"]
