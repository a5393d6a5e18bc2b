"""The bundle's receipt attestation is not compared with the acquisition's, so a result fetched under another egress policy is read."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            and result["request_digest"] == acquisition["request_digest"]\n'
    '            and receipt["egress_policy_attestation"] == acquisition["egress_policy_attestation"])\n',
    '            and result["request_digest"] == acquisition["request_digest"])\n',
)]
KILLS = ["acquire.bundle"]
