"""On a stop the running runner's record is marked fenced, but the runner itself is never killed: it outlives the worker."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if stop_requested():  # SCAN-STOP-4: no runner outlives a stop; its record says fenced\n'
    '                self.kill_own(process, identity)\n',
    '            if stop_requested():  # SCAN-STOP-4: no runner outlives a stop; its record says fenced\n',
)]
KILLS = ["stop.runner"]
