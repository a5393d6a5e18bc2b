"""Heartbeats are sent only between probes (a beat driven by the claim loop): they stop while a probe is acquired."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            if self.session.deadline.expired():\n'
    '                return  # SESSION-HEARTBEAT-4: no beat at or after the deadline\n',
    '            if self.session.deadline.expired():\n'
    '                return  # SESSION-HEARTBEAT-4: no beat at or after the deadline\n'
    '            if self.session.state == PROBING:\n'
    '                slot += 1\n'
    '                continue\n',
)]
KILLS = ["heartbeat.during-probe"]
