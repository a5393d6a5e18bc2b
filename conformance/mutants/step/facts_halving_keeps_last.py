"""Facts over the 1 MiB ceiling are halved keeping the last half instead of the first."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        kept = kept[:len(kept) // 2]",
    "        kept = kept[len(kept) - len(kept) // 2:]",
)]
KILLS = ["work.facts-ceiling-order"]
