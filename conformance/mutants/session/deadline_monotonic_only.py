"""The time left is read from the monotonic clock alone after admission: a wall clock stepped forward past the expiry is not seen."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            left = min(self.expires_at - time.time(), self.mono_at - time.monotonic())\n',
    '            left = self.mono_at - time.monotonic()\n',
)]
KILLS = ["deadline.clock-step"]
