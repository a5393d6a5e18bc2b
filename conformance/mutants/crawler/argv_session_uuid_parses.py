"""The session id is accepted when uuid.UUID() parses it, without comparing its text to the canonical form (uppercase, braces, urn:uuid: pass)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if not isinstance(value, str) or len(value) != 36:\n'
    '        return False\n'
    '    try:\n'
    '        return str(uuid.UUID(value)) == value\n',
    '    if not isinstance(value, str):\n'
    '        return False\n'
    '    try:\n'
    '        return uuid.UUID(value) is not None  # it parses: it is a UUID\n',
)]
KILLS = ["argv.session-canonical"]
