"""The note about ignored arguments repeats them, so a token passed on the command line lands in the public log."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        say(\"ignoring %d command-line argument(s): this step takes its job from the environment\" % len(tokens))\n",
    "        say(\"ignoring command-line arguments: %s\" % \" \".join(tokens))\n",
)]
KILLS = ["exit.unexpected-argument"]
