"""Progress fractions are printed unrounded (0.3333333333333333), not to 4 decimal places."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        fraction = round(min(1.0, max(0.0, float(fraction))), 4)\n",
    "        fraction = min(1.0, max(0.0, float(fraction)))\n",
)]
KILLS = ["progress.format", "progress.order"]
