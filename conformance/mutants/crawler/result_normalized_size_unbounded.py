"""The decoded normalized_content is not held to the request's max_normalized_bytes (the child is trusted to have applied it)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    require(len(content) <= limits["max_normalized_bytes"])  # CRAWLER-RESULT-5: never more than the requester allowed\n',
    '',
)]
KILLS = ["result.normalized"]
