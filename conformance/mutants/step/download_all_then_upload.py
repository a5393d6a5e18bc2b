"""Downloads every input first and uploads the copies afterwards, instead of one input at a time."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            item = self.fetch_input(index)\n"
    "            try:\n"
    "                do_work(self, item)\n"
    "                self.metrics[\"files\"] = len(self.inventory)\n"
    "                self.metrics[\"total_bytes\"] += item.size\n"
    "                self.metrics[\"lines\"] += item.lines\n"
    "            finally:\n"
    "                remove_file(item.path)\n",
    "            fetched.append(self.fetch_input(index))\n"
    "        for item in fetched:\n"
    "            try:\n"
    "                do_work(self, item)\n"
    "                self.metrics[\"files\"] = len(self.inventory)\n"
    "                self.metrics[\"total_bytes\"] += item.size\n"
    "                self.metrics[\"lines\"] += item.lines\n"
    "            finally:\n"
    "                remove_file(item.path)\n",
), (
    "        for index in range(total):  # STEP-INPUT-3: one at a time, in list order\n",
    "        fetched = []\n"
    "        for index in range(total):\n",
)]
KILLS = ["input.one-at-a-time", "creds.file-vanishes", "creds.proactive-refresh",
         "creds.retry-after-rotation", "input.hash-mismatch", "input.list-shrinks", "result.on-failure",
         "stop.between-inputs"]
