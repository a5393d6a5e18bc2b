"""Any non-empty string is claimed as a fact value: no 512-character limit, no control-character rule."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            usable = 0 < len(value) <= MAX_FACT_VALUE_CHARS and not _FACT_FORBIDDEN_RE.search(value)\n",
    "            usable = len(value) > 0\n",
)]
KILLS = ["result.fact-rules"]
