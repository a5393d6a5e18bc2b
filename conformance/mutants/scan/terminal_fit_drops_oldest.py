"""A report that does not fit in 16 KiB drops its oldest diagnostics until it fits, instead of shortening their body texts."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    diagnostics = diagnostics[-MAX_DIAGNOSTICS:]\n'
    '    desired = [d.wanted() for d in diagnostics]\n',
    '    diagnostics = diagnostics[-MAX_DIAGNOSTICS:]\n'
    '    while len(diagnostics) > 1 and len(canonical(dict(report, diagnostics=[\n'
    '            d.envelope(d.wanted()) for d in diagnostics]))) > TERMINAL_REPORT_MAX_BYTES:\n'
    '        diagnostics = diagnostics[1:]\n'
    '    desired = [d.wanted() for d in diagnostics]\n',
)]
KILLS = ["terminal.fit"]
