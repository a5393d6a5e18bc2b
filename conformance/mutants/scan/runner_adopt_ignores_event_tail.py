"""A completed outcome is adopted whatever its last_event_sequence says: an event tail that was lost goes unnoticed."""
NODE = "nodes/scan_worker.py"
REPLACE = [('        if outcome["last_event_sequence"] != self.last_sequence:', '        if False:')]
KILLS = ["runner.adopt-bound"]
