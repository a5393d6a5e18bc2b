"""main() returns 20 whenever a stop was requested, even one that arrived while the receipt of a finished run was written."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        return Run(config, creds).execute()\n",
    "        code = Run(config, creds).execute()\n"
    "        return EXIT_CANCELLED if STOP.requested else code\n",
)]
KILLS = ["stop.receipt-kept"]
