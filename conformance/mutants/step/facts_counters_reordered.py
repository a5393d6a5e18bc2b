"""The facts_not_claimed sentence names its counters in another order (over_cap first), so two nodes' summaries read differently."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "UNCLAIMED_ORDER = (\"unusable\", \"bad_key\", \"over_cap\")",
    "UNCLAIMED_ORDER = (\"over_cap\", \"bad_key\", \"unusable\")",
)]
KILLS = ["work.fact-cap"]
