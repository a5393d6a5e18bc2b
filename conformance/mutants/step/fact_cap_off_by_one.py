"""The fact cap lets one fact past the platform's 10,000, which the platform then drops without a word."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        if len(self.facts) >= MAX_FACTS:",
    "        if len(self.facts) > MAX_FACTS:",
)]
KILLS = ["work.fact-cap"]
