"""A capability window over 30 minutes is clamped to 30 minutes instead of refused (in both processes)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        if deadline.initial > MAX_SESSION_CAPABILITY_REMAINING_SECONDS:  # SESSION-LEASE-4: refused, never clamped\n'
    '            raise SessionError(SESSION_LEASE_EXPIRY_UNREASONABLE, "a window over 30 minutes")\n',
    '',
), (
    '            if deadline.initial > MAX_SESSION_CAPABILITY_REMAINING_SECONDS:\n'
    '                return self.kill_with(failure=SESSION_LEASE_EXPIRY_UNREASONABLE)\n',
    '',
)]
KILLS = ["lease.window"]
