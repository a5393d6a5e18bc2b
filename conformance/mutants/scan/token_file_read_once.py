"""Requests use the token read at start; the file is not stat'ed again (only a 401 re-reads it)."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        token = self.tokens.current()  # SCAN-TOKEN-5: a rotated file is used from this request on\n',
    '        token = self.tokens._token\n',
)]
KILLS = ["token.rotation"]
