"""attempt:start is never sent: the node goes from the lease straight to its event and claim loop."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            self.callbacks.call("start", canonical_bytes(binding_of(lease)), "session:%s:start" % lease.attempt_id)\n',
    '            pass  # the server learns the attempt runs from its first claim\n',
)]
KILLS = ["start.first-call"]
