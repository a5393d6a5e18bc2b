"""The monitor keeps no deadline of its own: it waits for the capability process, however long that process is stuck."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                timeout = min(self.deadline.remaining(), WALL_CLOCK_RECHECK_S)\n',
    '                timeout = None\n',
), (
    '            if self.deadline is not None and self.deadline.expired():\n'
    '                return self.kill_with(terminal=CAPABILITY_EXPIRED)  # SESSION-DEADLINE-5: whatever it is doing\n',
    '',
)]
KILLS = ["deadline.monitor"]
