"""The request's egress_policy_attestation is passed on to the child but never compared with the node's own policy digest."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        if attestation is not None and attestation != request["egress_policy_attestation"]:\n',
    '        if False:\n',
)]
KILLS = ["fetch.attestation"]
