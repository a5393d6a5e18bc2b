"""The token is checked with re.match instead of fullmatch, so a JWS followed by a newline, a fourth segment or other trailing text is accepted."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    'if not whole or not _JWS_RE.fullmatch(view[:count]):',
    'if not whole or not _JWS_RE.match(view[:count]):',
)]
KILLS = ["identity.malformed"]
