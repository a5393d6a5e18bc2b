"""Without a deployed policy the node trusts the network for addresses too: a source resolving to loopback (or the metadata server) is contacted."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        if not is_public(address) and not allowed:",
    "        if not is_public(address) and not allowed and policy.hosts is not None:",
)]
KILLS = ["config.upstream-environment"]
