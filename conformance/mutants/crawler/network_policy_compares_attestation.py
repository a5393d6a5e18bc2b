"""Without a deployed policy the node still compares the request's attestation, with nothing: every request is refused as made under another policy."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        if attestation is not None and attestation != request[\"egress_policy_attestation\"]:\n",
    "        if attestation != request[\"egress_policy_attestation\"]:\n",
)]
KILLS = ["config.upstream-environment"]
