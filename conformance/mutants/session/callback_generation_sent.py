"""The fence binding of every command body also carries the lease's generation."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            "attempt_id": lease.attempt_id, "fence": lease.fence}\n',
    '            "attempt_id": lease.attempt_id, "fence": lease.fence, "generation": lease.generation}\n',
)]
KILLS = ["callback.fence-binding"]
