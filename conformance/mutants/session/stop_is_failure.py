"""A stop ends the session as failed (SESSION_WORKER_STOPPING, exit 1), as the crawler ends a cancelled run, not as service_stopped."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "            STOP.abandonable = False\n"
    "            self.decide(terminal=SERVICE_STOPPED)  # SESSION-STOP-4, unless something decided first\n",
    "            STOP.abandonable = False\n"
    "            self.decide(failure=SESSION_WORKER_STOPPING)  # SESSION-STOP-4, unless something decided first\n",
)]
KILLS = ["stop.idle", "stop.probe-in-flight", "stop.drain-bound"]
