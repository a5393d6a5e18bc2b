"""Inputs are processed last to first, as a loop over a list popped from its end would."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        for index in range(total):  # STEP-INPUT-3: one at a time, in list order\n",
    "        for index in reversed(range(total)):\n",
)]
KILLS = ["input.one-at-a-time"]
