"""The state's bundle record names the file's digest as canonical_scan_event_hash instead of the trailer's events_sha256."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('"canonical_scan_event_hash": meta["events_sha256"]', '"canonical_scan_event_hash": meta["payload_sha256"]'),
]
KILLS = ["bundle.record"]
