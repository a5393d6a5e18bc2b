"""The fetch evidence (raw hash, status, ETag and Last-Modified digests) is checked in the receipt only, not the observation."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    for document in (receipt, observation):  # CRAWLER-RESULT-4: both documents\n',
    '    for document in (receipt,):\n',
)]
KILLS = ["result.evidence"]
