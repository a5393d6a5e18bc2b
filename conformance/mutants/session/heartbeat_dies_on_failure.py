"""The heartbeat thread ends at its first failed beat, so the session goes on without beats."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "                                            limit_s=min(self.interval, CALLBACK_TIMEOUT_S), holder=self)\n"
    "            except Exception:\n"
    "                pass  # SESSION-HEARTBEAT-3: neither retried nor fatal; the next beat is on schedule\n",
    "                                            limit_s=min(self.interval, CALLBACK_TIMEOUT_S), holder=self)\n"
    "            except Exception:\n"
    "                return\n",
)]
KILLS = ["heartbeat.failures-ignored"]
