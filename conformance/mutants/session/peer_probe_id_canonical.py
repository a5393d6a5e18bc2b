"""A probe id must be a canonical UUID: one in upper case ends the session PROBE_CLAIM_INVALID."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                if not isinstance(probe, dict) or probe_uuid(probe.get("probe_id")) is None:\n',
    '                if not isinstance(probe, dict) or not is_canonical_uuid(probe.get("probe_id")):\n',
)]
KILLS = ["peer.claim-forms"]
