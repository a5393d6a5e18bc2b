"""A claimed probe's probe_id is taken as anything at all, not required to be a UUID (D5)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                if not isinstance(probe, dict) or probe_uuid(probe.get("probe_id")) is None:\n',
    '                if not isinstance(probe, dict) or "probe_id" not in probe:\n',
)]
KILLS = ["claim.probe-invalid"]
