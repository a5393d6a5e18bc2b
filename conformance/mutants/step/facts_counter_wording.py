"""The facts_not_claimed sentence puts each counter's name before its count ("unusable: 2"), not in the contract's wording."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        counted = [\"%d %s\" % (self.unclaimed[k], k) for k in UNCLAIMED_ORDER if self.unclaimed[k]]\n",
    "        counted = [\"%s: %d\" % (k, self.unclaimed[k]) for k in UNCLAIMED_ORDER if self.unclaimed[k]]\n",
)]
KILLS = ["work.declined-facts", "work.fact-cap"]
