"""A process failure is reported with a detail of the worker's own words ("the scan runner failed") instead of the contract's fixed "local worker execution failed"."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    'PROCESS_FAILED = ("client_process_failed", "local worker execution failed")',
    'PROCESS_FAILED = ("client_process_failed", "the scan runner failed")',
)]
KILLS = ["terminal.report"]
