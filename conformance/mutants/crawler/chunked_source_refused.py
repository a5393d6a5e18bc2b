"""stream_body() takes a source without a Content-Length as closed early: a source sent chunked, as many web servers send one, is CRAWLER_SOURCE_UNAVAILABLE."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if declared is not None and size < declared:',
    '    if declared is None or size < declared:',
)]
KILLS = ["peer.chunked-answers"]
