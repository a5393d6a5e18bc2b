"""A claimed probe is worked before session_state is read, so a closing answer's probe is still answered."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            if state in SESSION_STATES_THAT_END:  # SESSION-CLAIM-4: read before claimed; quietly\n'
    '                raise SessionOver(terminal=state)\n'
    '            if claimed:\n',
    '            if not claimed and state in SESSION_STATES_THAT_END:\n'
    '                raise SessionOver(terminal=state)\n'
    '            if claimed:\n',
)]
KILLS = ["claim.closed"]
