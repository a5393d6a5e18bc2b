"""The heartbeat stops as soon as a stop arrives, so the attempt may be swept while the node still drains its report."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "            STOP.abandonable = False\n"
    "            self.decide(terminal=SERVICE_STOPPED)  # SESSION-STOP-4, unless something decided first\n",
    "            STOP.abandonable = False\n"
    "            self.decide(terminal=SERVICE_STOPPED)  # SESSION-STOP-4, unless something decided first\n"
    "            if self.heartbeat is not None:\n"
    "                self.heartbeat.ended.set()\n",
)]
KILLS = ["stop.drain-bound"]
