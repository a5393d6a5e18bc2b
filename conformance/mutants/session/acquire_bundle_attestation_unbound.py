"""The bundle's receipt attestation is not compared with the acquisition's, so a result fetched under another egress policy is read."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if not (bound[0] == source_id and bound[1] == source_id and bound[2] == acquisition["request_digest"]\n'
    '            and bound[3] == acquisition["egress_policy_attestation"]):\n',
    '    if not (bound[0] == source_id and bound[1] == source_id and bound[2] == acquisition["request_digest"]):\n',
)]
KILLS = ["acquire.bundle"]
