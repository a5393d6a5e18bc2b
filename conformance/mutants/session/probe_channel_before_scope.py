"""The channel is judged before the scope, so an out-of-scope probe on a lease without acquisitions is called PROBE_SOURCE_CHANNEL_UNAVAILABLE."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        if probe.source_id not in lease.source_ids:  # D3: an empty allowlist admits nothing\n'
    '            raise ProbeFailure(PROBE_SOURCE_OUT_OF_SCOPE)\n'
    '        # SESSION-PROBE-1: no channel, no read\n'
    '        if not (self.callbacks.allowed("acquire") and self.callbacks.allowed("read")):\n'
    '            raise ProbeFailure(PROBE_SOURCE_CHANNEL_UNAVAILABLE)\n',
    '        if not (self.callbacks.allowed("acquire") and self.callbacks.allowed("read")):\n'
    '            raise ProbeFailure(PROBE_SOURCE_CHANNEL_UNAVAILABLE)\n'
    '        if probe.source_id not in lease.source_ids:\n'
    '            raise ProbeFailure(PROBE_SOURCE_OUT_OF_SCOPE)\n',
)]
KILLS = ["probe.scope-and-channel"]
