"""A 200 claim resolution's reservation_id must be a JSON integer: "7" keeps the claim (same request id) for ever."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('    rid = upstream_int(value.get("reservation_id")) if isinstance(value, dict) else None\n',
     '    rid = value.get("reservation_id") if isinstance(value, dict) else None\n'),
]
KILLS = ['peer.claim-resolution']
