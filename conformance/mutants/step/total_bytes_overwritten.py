"""metrics.total_bytes is overwritten with each input's size (= instead of +=)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    run.metrics[\"total_bytes\"] += item.size\n",
    "    run.metrics[\"total_bytes\"] = item.size\n",
)]
KILLS = ["work.metrics-and-facts"]
