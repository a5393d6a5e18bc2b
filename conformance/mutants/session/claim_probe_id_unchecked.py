"""A claimed probe's probe_id is taken as any string, not required to be a canonical UUID (D5)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                if not isinstance(probe, dict) or not is_canonical_uuid(probe.get("probe_id")):\n',
    '                if not isinstance(probe, dict) or not isinstance(probe.get("probe_id"), str):\n',
)]
KILLS = ["claim.probe-invalid"]
