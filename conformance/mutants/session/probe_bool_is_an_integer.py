"""A boolean passes where the vocabulary wants an integer (`isinstance(True, int)` holds in Python), so scan_rows true is read as 1."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "def _is_int(value):\n"
    "    return isinstance(value, int) and not isinstance(value, bool)  # SESSION-PROBE-2: true is not 1\n",
    "def _is_int(value):\n"
    "    return isinstance(value, int)\n",
)]
KILLS = ["probe.vocabulary"]
