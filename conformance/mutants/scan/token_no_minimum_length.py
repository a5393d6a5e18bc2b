"""Any non-empty token is accepted: the 16-character minimum is not checked."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    return (isinstance(text, str) and MIN_TOKEN_CHARS <= len(text) <= MAX_TOKEN_CHARS\n',
    '    return (isinstance(text, str) and 1 <= len(text) <= MAX_TOKEN_CHARS\n',
)]
KILLS = ["token.form"]
