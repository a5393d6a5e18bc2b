"""A 401 fails the step at once: the rotated file is only read before the next request, after the error delay."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            fresh = self.tokens.reread(token)\n',
    '            fresh = None\n',
)]
KILLS = ["token.401-reread"]
