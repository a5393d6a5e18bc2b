"""normalized_content is only decoded, never re-encoded: a second base64 spelling of the same
bytes (padding bits set) is accepted, as it is by any node that trusts b64decode alone."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    # CRAWLER-RESULT-5: one base64 spelling per content (zero padding bits), as re-encoding gives\n'
    '    require(content is not None and base64.b64encode(content).decode("ascii") == encoded)\n',
    '    require(content is not None)  # decoded is enough\n',
)]
KILLS = ["result.normalized"]
