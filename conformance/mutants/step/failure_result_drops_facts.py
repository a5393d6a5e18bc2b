"""The failure-path result.json is written with no facts: the facts of copies already accepted are lost."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "        elif action == \"upload-first\":\n"
    "            self.forget(RESULT_FILENAME)\n",
    "        elif action == \"upload-first\":\n"
    "            self.forget(RESULT_FILENAME)\n"
    "            self.facts = []\n",
)]
KILLS = ["work.facts-on-failure"]
