"""schema_digest covers only the columns shown (the first 64), not all the content's columns."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            "schema_digest": hashlib.sha256(canonical_bytes(pairs)).hexdigest(),  # over all the columns\n',
    '            "schema_digest": hashlib.sha256(canonical_bytes(pairs[:MAX_PROFILE_COLUMNS])).hexdigest(),\n',
)]
KILLS = ["work.source-inspect"]
