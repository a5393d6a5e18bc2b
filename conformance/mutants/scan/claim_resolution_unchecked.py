"""Any 200 with a resolution object ends the claim: a malformed resolution deletes the claiming state instead of being a protocol error."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if not claim_resolution_ok(resolution):',
    '            if not isinstance(resolution, dict):',
)]
KILLS = ["claim.resolved"]
