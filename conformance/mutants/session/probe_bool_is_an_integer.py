"""A boolean passes where the vocabulary wants an integer (`isinstance(True, int)` holds in Python), so scan_rows true is read as 1."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    return is_int(value) and low <= value <= high\n",
    "    return isinstance(value, int) and low <= value <= high\n",
)]
KILLS = ["probe.vocabulary"]
