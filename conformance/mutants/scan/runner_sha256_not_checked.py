"""A target's SHA-256 is never compared with its pin: other bytes than the pinned ones are scanned and uploaded."""
NODE = "nodes/scan_worker.py"
REPLACE = [('            if digest.hexdigest() != expected:', '            if False:')]
KILLS = ["runner.target-pins"]
