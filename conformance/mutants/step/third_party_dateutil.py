"""Imports python-dateutil (when installed) to parse expires_at: a third-party module in a node that must run on a bare Python."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if not isinstance(text, str):\n"
    "        return None\n"
    "    match = _UTC_TIMESTAMP_RE.match(text.strip())\n",
    "    if not isinstance(text, str):\n"
    "        return None\n"
    "    try:\n"
    "        from dateutil import parser as _dateutil  # nicer ISO-8601 parsing when it is there\n"
    "        return _dateutil.isoparse(text.strip()).timestamp()\n"
    "    except Exception:\n"
    "        pass\n"
    "    match = _UTC_TIMESTAMP_RE.match(text.strip())\n",
)]
KILLS = ["node.stdlib"]
