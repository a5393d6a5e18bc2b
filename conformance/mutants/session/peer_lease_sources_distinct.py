"""A source named twice in the lease's source_ids refuses the lease, though the upstream keeps it once."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "            and all(is_canonical_uuid(source) for source in sources)):\n",
    "            and all(is_canonical_uuid(source) for source in sources) and len(set(sources)) == len(sources)):\n",
)]
KILLS = ["peer.lease-forms"]
