"""The sandbox policy is written with the default probe timeout, whatever MR_SESSION_WORKER_PROBE_TIMEOUT_SECONDS says, so its digest is not that of the policy applied."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            "cpu_seconds": config.sandbox_cpu_s, "timeout_ms": config.sandbox_timeout_ms,\n',
    '            "cpu_seconds": 46, "timeout_ms": 45000,\n',
)]
KILLS = ["probe.result-bound"]
