"""The request's egress_policy_attestation is passed on to the child but never compared with the node's own policy digest."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        if config.policy.attestation != request["egress_policy_attestation"]:  # CRAWLER-FETCH-1: before any source\n'
    '            raise CrawlerError(CRAWLER_EGRESS_POLICY_MISMATCH, "the request names another egress policy")\n',
    "",
)]
KILLS = ["fetch.attestation"]
