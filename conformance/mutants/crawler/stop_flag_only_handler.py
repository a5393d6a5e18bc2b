"""The stop handler only sets the flag (no shutdown of in-flight sockets, no wakeup): a blocked read, write or wait runs on until its timeout."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "        try:\n"
    "            if self.abandonable:\n"
    "                self.abandon_all()\n"
    "        except Exception:\n"
    "            pass\n"
    "        try:\n"
    "            if self._wake_w is not None:\n"
    "                os.write(self._wake_w, b\"\\0\")\n"
    "        except OSError:\n"
    "            pass  # a full pipe already wakes its reader\n",
    "",
)]
KILLS = ["stop.identity", "stop.redeem", "stop.fetch", "stop.fetch-connect", "stop.child", "stop.sigint"]
