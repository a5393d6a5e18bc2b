"""Over the 1 MiB ceiling every fact is dropped at once instead of halving the list until it fits."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        kept = kept[:len(kept) // 2]  # STEP-RESULT-2: then facts are halved, keeping the first\n",
    "        kept = []\n",
)]
KILLS = ["result.facts-ceiling"]
