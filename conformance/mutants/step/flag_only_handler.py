"""The SIGTERM handler only sets a flag (no socket shutdown, no wakeup): a blocked read or wait runs on until its timeout."""
NODE = "nodes/hello_node.py"
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
KILLS = ["stop.after-work", "stop.upload-answer", "stop.upload-body"]
