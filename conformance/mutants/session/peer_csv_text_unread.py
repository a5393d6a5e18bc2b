"""Content that is CSV text, not our JSON lines, cannot be read: the probe fails PROBE_PARSE_EMPTY."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if data_format == "csv":\n'
    "        return _csv_table(content)\n",
    "",
)]
KILLS = ["peer.bundle-csv"]
