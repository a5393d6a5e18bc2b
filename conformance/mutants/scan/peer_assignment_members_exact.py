"""An assignment's top level must be exactly the members the contract lists (the node before issue 20): one member more is reported worker_contract_invalid.assignment."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('    need(isinstance(assignment, dict), "assignment")\n',
     '    need(isinstance(assignment, dict) and not set(assignment) - {"reservation", "deadlines", "execution_snapshot_sha256",\n         "planning_kind", "targets", "source", "platform", "scan_deadline_at", "assignment_deadline_at"}, "assignment")\n'),
]
KILLS = ['peer.assignment-members']
