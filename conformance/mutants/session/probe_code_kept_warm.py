"""The bytecode compiled first is kept for the whole session: a node file replaced meanwhile never reaches a child."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            if self.known is not None and self.known[0] == digest and os.path.isfile(self.known[1]):\n',
    '            if self.known is not None and os.path.isfile(self.known[1]):\n',
)]
KILLS = ["isolation.code-changed"]
