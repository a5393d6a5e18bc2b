"""allowed_callback_paths is validated and never used (the upstream's behaviour, D16): every verb is sent."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    def allowed(self, verb, ids=None):\n'
    '        """SESSION-CALLBACK-2: the lease allows this verb\'s path (with these ids, or any)."""\n',
    '    def allowed(self, verb, ids=None):\n'
    '        """SESSION-CALLBACK-2: the lease allows this verb\'s path (with these ids, or any)."""\n'
    '        return True\n',
), (
    '        if not allows(self.lease.allowed, path):  # SESSION-CALLBACK-2 (D16): never sent\n',
    '        if False:\n',
)]
KILLS = ["callback.allowed-paths"]
