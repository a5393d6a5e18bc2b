"""An unexpected argument is refused the argparse way: a usage error and exit status 2, outside the contract's codes."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        say(\"ignoring %d command-line argument(s): this step takes its job from the environment\" % len(tokens))\n",
    "        sys.stderr.write(\"usage: hello_node.py [--help]\\nhello_node.py: error: unrecognized arguments\\n\")\n"
    "        raise SystemExit(2)\n",
)]
KILLS = ["exit.unexpected-argument"]
