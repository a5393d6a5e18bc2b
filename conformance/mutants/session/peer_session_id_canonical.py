"""An acquisition's crawler_session_id must be a canonical UUID: one in upper case is misbound."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    session = probe_uuid(named)\n",
    "    session = named if is_canonical_uuid(named) else None\n",
)]
KILLS = ["peer.acquisition-members"]
