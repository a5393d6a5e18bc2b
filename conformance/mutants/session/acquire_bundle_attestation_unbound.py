"""The bundle's receipt attestation is not compared with the acquisition's, so a result fetched under another egress policy is read."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if bound != (source_id, source_id, acquisition["request_digest"], ADAPTER_ID,\n'
    '                 acquisition["egress_policy_attestation"]):\n',
    '    if bound[:4] != (source_id, source_id, acquisition["request_digest"], ADAPTER_ID):\n',
)]
KILLS = ["acquire.bundle"]
