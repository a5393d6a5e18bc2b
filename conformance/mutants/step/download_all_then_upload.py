"""Downloads every input first and does the work on them afterwards, instead of one input at a time."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            item = self.fetch_input(index)\n"
    "            self.phase = \"working on input %d of %d\" % (index + 1, total)\n"
    "            try:\n"
    "                do_work(self, item)\n"
    "            finally:\n"
    "                remove_file(item.path)\n",
    "            fetched.append(self.fetch_input(index))\n"
    "        for item in fetched:\n"
    "            try:\n"
    "                do_work(self, item)\n"
    "            finally:\n"
    "                remove_file(item.path)\n",
), (
    "        for index in range(total):  # STEP-INPUT-3: one at a time, in list order\n",
    "        fetched = []\n"
    "        for index in range(total):\n",
)]
KILLS = ["work.copy-before-next"]
