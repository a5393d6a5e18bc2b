"""The first heartbeat is sent at once, when the heartbeat starts, instead of one interval later."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    def run(self):\n'
    '        slot = 1\n',
    '    def run(self):\n'
    '        slot = 0\n',
)]
KILLS = ["heartbeat.cadence"]
