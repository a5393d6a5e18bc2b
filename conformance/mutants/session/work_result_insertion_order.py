"""The probe child writes its result in insertion order rather than the canonical sorted form."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    data = canonical_bytes(result)\n',
    '    data = json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode("utf-8")\n',
)]
KILLS = ["work.exact-output"]
