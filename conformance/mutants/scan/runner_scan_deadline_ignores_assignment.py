"""The scan deadline is now + target_scan_timeout_seconds alone: a scan runs past the assignment's deadline."""
NODE = "nodes/scan_worker.py"
REPLACE = [('scan_deadline = min(now + assignment["deadlines"]["target_scan_timeout_seconds"], deadline)',
            'scan_deadline = now + assignment["deadlines"]["target_scan_timeout_seconds"]')]
KILLS = ["runner.assignment-deadline"]
