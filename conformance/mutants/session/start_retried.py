"""attempt:start is retried like any other call when it fails transiently, instead of ending the session."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            self.callbacks.call("start", canonical_bytes(binding_of(lease)), "session:%s:start" % lease.attempt_id)\n',
    '            for again in range(3):\n'
    '                try:\n'
    '                    self.callbacks.call("start", canonical_bytes(binding_of(lease)),\n'
    '                                        "session:%s:start" % lease.attempt_id)\n'
    '                    break\n'
    '                except Refusal as failed:\n'
    '                    if not failed.transient or again == 2:\n'
    '                        raise\n'
    '                    self.pause(0.1)\n',
)]
KILLS = ["start.refused"]
