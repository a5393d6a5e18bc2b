"""deadlines.assignment_deadline_at is required: the upstream's fallback to reservation.remote_expires_at is not taken."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('    deadline = read_instant(deadlines.get("assignment_deadline_at") or reservation.get("remote_expires_at"))\n',
     '    deadline = read_instant(deadlines.get("assignment_deadline_at"))\n'),
]
KILLS = ['peer.optional-members']
