"""Any non-empty string is taken as the capability and sent as a bearer."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if not (isinstance(capability, str) and len(capability) <= MAX_CAPABILITY_BYTES\n'
    '            and _CAPABILITY_RE.fullmatch(capability)):\n',
    '    if not (isinstance(capability, str) and capability):\n',
)]
KILLS = ["lease.capability"]
