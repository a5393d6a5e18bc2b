"""Without a deployed policy any port is allowed, so a source URL can name any service on a public host."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "    if port not in policy.ports:",
    "    if policy.hosts is not None and port not in policy.ports:",
)]
KILLS = ["config.upstream-environment"]
