"""The example work's line count reads only the first chunk's newlines of each input."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    tally[\"lines\"] = tally.get(\"lines\", 0) + data.count(b\"\\n\", 0, count)",
    "    tally.setdefault(\"lines\", data.count(b\"\\n\", 0, count))",
)]
KILLS = ["work.metrics-and-facts"]
