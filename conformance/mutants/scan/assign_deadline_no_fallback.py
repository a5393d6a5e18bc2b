"""Only the status's expires_at is read as the deadline: a status without it lets an assignment whose reservation.remote_expires_at has passed be scanned."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if expires is None:\n'
    '                reservation = assignment.get("reservation") if',
    '            if expires is None and False:\n'
    '                reservation = assignment.get("reservation") if',
)]
KILLS = ["assign.past-deadline"]
