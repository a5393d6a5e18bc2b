"""A request's count written 3.0 is not an integer: the probe fails PROBE_REQUEST_INVALID."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:\n",
    "    if False:\n",
)]
KILLS = ["peer.request-numbers"]
