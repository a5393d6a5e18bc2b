"""metrics.total_bytes is overwritten with each input's size (= instead of +=)."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "                self.metrics[\"total_bytes\"] += item.size\n",
    "                self.metrics[\"total_bytes\"] = item.size\n",
)]
KILLS = ["result.shape"]
