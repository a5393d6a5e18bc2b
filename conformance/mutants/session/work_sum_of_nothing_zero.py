"""A sum or average over no collected cell is 0 rather than null."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    elif total is None:\n"
    "        value = None  # SESSION-WORK-6: nothing collected is null, never 0\n",
    "    elif total is None:\n"
    "        value = 0\n",
)]
KILLS = ["work.aggregates"]
