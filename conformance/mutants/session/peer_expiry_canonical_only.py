"""The descriptor's expires_at must be a canonical UTC timestamp: an offset or +00:00 makes it invalid."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    expires_at = instant_of(expires) if expires is not None else None\n",
    "    expires_at = parse_timestamp(expires) if expires is not None else None\n",
)]
KILLS = ["peer.acquisition-numbers"]
