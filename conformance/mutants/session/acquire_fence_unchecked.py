"""The acquisition's producer_fence is not compared with the lease's fence, so another attempt's acquisition is read."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    'ACQUISITION_BINDING = ("workspace_id", "run_id", "attempt_id", "research_session_id", "source_id", "producer_fence",\n'
    '                       "adapter_id")\n',
    'ACQUISITION_BINDING = ("workspace_id", "run_id", "attempt_id", "research_session_id", "source_id", "adapter_id")\n',
)]
KILLS = ["acquire.misbound"]
