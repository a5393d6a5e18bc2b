"""The allowlist is only checked to be a list: its length and its entries' form are not."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if not (isinstance(sources, list) and len(sources) <= MAX_SOURCE_IDS\n'
    '            and all(is_canonical_uuid(source) for source in sources)):\n',
    '    if not isinstance(sources, list):\n',
)]
KILLS = ["lease.context"]
