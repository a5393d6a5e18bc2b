"""allowed_callback_paths must list the start, claim and result templates as written: concrete paths and prefixes are refused."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    patterns = tuple(path_pattern(path) for path in allowed)\n",
    "    if any(TEMPLATES[verb][1] not in allowed for verb in REQUIRED_VERBS):\n"
    '        raise invalid("allowed_callback_paths lacks start, claim or result")\n'
    "    patterns = tuple(path_pattern(path) for path in allowed)\n",
)]
KILLS = ["peer.lease-paths"]
