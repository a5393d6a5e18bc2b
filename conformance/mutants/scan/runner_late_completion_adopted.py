"""A completed terminal decided after its deadline is adopted: a scan that lost the race with the watchdog is uploaded."""
NODE = "nodes/scan_worker.py"
REPLACE = [('        if parse_instant(terminal["decided_at"]) > parse_instant(deadline):', '        if False:')]
KILLS = ["runner.late-completion"]
