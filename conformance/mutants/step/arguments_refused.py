"""Unknown arguments are refused as permanent (10), so a platform image that launches its step with arguments fails every job the upstream would have run."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        say(\"ignoring %d command-line argument(s): this step takes its job from the environment\" % len(tokens))\n",
        "        raise UsageError(\"this node takes no arguments (see --help)\", OUTCOME_PERMANENT)\n",
)]
KILLS = ["exit.unexpected-argument"]
