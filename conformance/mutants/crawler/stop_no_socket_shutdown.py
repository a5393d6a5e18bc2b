"""The stop handler wakes the select() waits but never shuts down in-flight sockets, so a read blocked on a silent peer is not ended."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        try:\n"
    "            if self.abandonable:\n"
    "                self.abandon_all()\n"
    "        except Exception:\n"
    "            pass\n",
    "",
)]
KILLS = ["stop.identity", "stop.redeem", "stop.fetch", "stop.sigint"]
