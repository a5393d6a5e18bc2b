"""bundle_accepted always re-hashes the ready bundle, so a cleanup a crash interrupted (bundle gone, state left) never finishes."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if os.path.lexists(path) and known_digest != status["payload_sha256"]:',
    '            if known_digest != status["payload_sha256"]:',
)]
KILLS = ["reconcile.cleanup-crash-window"]
