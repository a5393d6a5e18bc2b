"""The egress policy variable is required, as in contract version 2: started with the upstream's environment, the node refuses to start."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        policy = NETWORK_POLICY  # CRAWLER-CONFIG-5 (D18)",
    "        raise invalid(\"the egress policy\")  # CRAWLER-CONFIG-5 (D18)",
)]
KILLS = ["config.upstream-environment"]
