"""An expired acquisition fails the probe at once: no second create under a new epoch."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        for again in (False, True):\n'
    '            try:\n'
    '                return self.acquire_once(source_id, self.epochs[source_id], ceiling)\n',
    '        for again in (True,):\n'
    '            try:\n'
    '                return self.acquire_once(source_id, self.epochs[source_id], ceiling)\n',
)]
KILLS = ["acquire.expired"]
