"""The capability's expiry ends the session as a failure, SESSION_CAPABILITY_EXPIRED and exit 1 (the upstream's error name), not as capability_expired."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "                self.decide(terminal=CAPABILITY_EXPIRED)  # SESSION-DEADLINE-4: silently\n",
    "                self.decide(failure=\"SESSION_CAPABILITY_EXPIRED\")  # SESSION-DEADLINE-4: silently\n",
), (
    "            if self.deadline is not None and self.deadline.expired():\n"
    "                return self.kill_with(terminal=CAPABILITY_EXPIRED)  # SESSION-DEADLINE-5: whatever it is doing\n",
    "            if self.deadline is not None and self.deadline.expired():\n"
    "                return self.kill_with(failure=\"SESSION_CAPABILITY_EXPIRED\")  # SESSION-DEADLINE-5\n",
), (
    "            return make_summary(self.session_id, None, terminal=CAPABILITY_EXPIRED)\n",
    "            return make_summary(self.session_id, None, failure=\"SESSION_CAPABILITY_EXPIRED\")\n",
)]
KILLS = ["deadline.idle", "deadline.probe-in-flight", "deadline.monitor"]
