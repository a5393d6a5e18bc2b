"""JSON lines of one object per row cannot be read: only our crawler's arrays are."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    return _object_table(content)\n"
    "\n"
    "\n"
    "def _lines(content, start):\n",
    "    raise ProbeFailure(PROBE_PARSE_EMPTY)\n"
    "\n"
    "\n"
    "def _lines(content, start):\n",
)]
KILLS = ["peer.bundle-forms"]
