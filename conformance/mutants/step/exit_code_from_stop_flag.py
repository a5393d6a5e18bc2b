"""main() returns 20 whenever a stop was requested, even one that arrived while the receipt of a finished run was written."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    return Run(config, creds).execute()\n",
    "    outcome = Run(config, creds).execute()\n"
    "    return OUTCOME_CANCELLED if STOP.requested else outcome\n",
)]
KILLS = ["stop.receipt-kept"]
