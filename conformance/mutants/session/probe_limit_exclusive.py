"""limit is checked against a half-open range, so the largest window the vocabulary allows (200 rows) is refused."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                and _int_within(normalized["limit"], 1, MAX_SAMPLE_LIMIT)):\n',
    '                and _int_within(normalized["limit"], 1, MAX_SAMPLE_LIMIT - 1)):\n',
)]
KILLS = ["probe.normalized-answered"]
