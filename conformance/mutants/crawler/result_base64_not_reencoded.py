"""normalized_content is only decoded, never re-encoded: a second base64 spelling of the same
bytes (padding bits set) is accepted, as it is by any node that trusts b64decode alone."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    require(content is not None and base64.b64encode(content).decode("ascii") == encoded)  # CRAWLER-RESULT-5\n',
    '    require(content is not None)  # decoded is enough\n',
)]
KILLS = ["result.normalized"]
