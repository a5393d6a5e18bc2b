"""An unexpected argument is refused the argparse way: a usage error and exit status 2, outside the contract's codes."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        say(\"this node takes no arguments (see --help)\")\n"
    "        return EXIT_PERMANENT\n",
    "        sys.stderr.write(\"usage: hello_node.py [--help]\\nhello_node.py: error: unrecognized arguments: %s\\n\"\n"
    "                         % \" \".join(args))\n"
    "        return 2\n",
)]
KILLS = ["exit.unexpected-argument"]
