"""An input list that shrank under a credentials refresh is called a broken envelope (permanent) instead of transient."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            raise Transient(\"the input list shrank under a credentials refresh\")\n",
    "            raise Permanent(\"the input list shrank under a credentials refresh\")\n",
)]
KILLS = ["input.list-shrinks"]
