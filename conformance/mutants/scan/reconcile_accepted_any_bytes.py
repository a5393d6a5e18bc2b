"""bundle_accepted is believed whatever payload_sha256 it names: the ready bundle is deleted even when the server holds other bytes."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                if meta["payload_sha256"] != status["payload_sha256"]:',
    '                if False:',
)]
KILLS = ["reconcile.accepted-bytes"]
