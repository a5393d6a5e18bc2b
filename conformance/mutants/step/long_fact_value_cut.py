"""A fact value over 512 characters is cut to 512 instead of declined and counted."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        if isinstance(value, str):\n"
    "            value = value.strip()\n",
    "        if isinstance(value, str):\n"
    "            value = value.strip()[:MAX_FACT_VALUE_CHARS]\n",
)]
KILLS = ["work.declined-facts"]
