"""A session_state "failed" ends the worker with a failure code and exit 1, which makes the platform retry the task."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            if state in SESSION_STATES_THAT_END:  # SESSION-CLAIM-4: read before claimed; quietly\n'
    '                raise SessionOver(terminal=state)\n',
    '            if state == FAILED_STATE:\n'
    '                raise SessionOver(failure="RESEARCH_SESSION_FAILED")\n'
    '            if state in SESSION_STATES_THAT_END:\n'
    '                raise SessionOver(terminal=state)\n',
)]
KILLS = ["claim.closed"]
