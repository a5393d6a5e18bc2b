"""allowed_callback_paths is validated and never used (the upstream's behaviour, D16): every verb is sent."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        return TEMPLATES[verb][1] in self.lease.allowed\n',
    '        return True\n',
)]
KILLS = ["callback.allowed-paths"]
