"""A restarted worker closes the generation a previous life recorded without stopping its runner, so a runner left over by a killed worker keeps running beside the new generation."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        if identity is not None:  # SCAN-RUNNER-9: only the exact pid + start time + executable is ever signalled\n',
    '        if False:\n',
)]
KILLS = ["crash.scan"]
