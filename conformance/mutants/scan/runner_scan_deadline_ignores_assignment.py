"""The scan deadline is now + target_scan_timeout_seconds alone: a scan runs past the assignment's deadline."""
NODE = "nodes/scan_worker.py"
REPLACE = [('scan_deadline = min(now + plan["target_scan_timeout_s"], deadline)',
            'scan_deadline = now + plan["target_scan_timeout_s"]')]
KILLS = ["runner.assignment-deadline"]
