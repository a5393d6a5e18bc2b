"""The crawl request keeps exact key sets at every level (the pre-issue-20 BOOT-5), so a member a later broker adds is refused."""
NODE = "nodes/crawler_job.py"
REPLACE = [
    ('    if not isinstance(value, dict) or not REQUEST_KEYS <= set(value):\n',
     '    if not isinstance(value, dict) or set(value) != REQUEST_KEYS:\n'),
    ('    if not isinstance(query, dict) or not QUERY_KEYS <= set(query):\n',
     '    if not isinstance(query, dict) or set(query) != QUERY_KEYS:\n'),
    ('    if not isinstance(limits, dict) or not set(key for key, _lo, _hi in limit_ranges()) <= set(limits):\n',
     '    if not isinstance(limits, dict) or set(limits) != set(key for key, _lo, _hi in limit_ranges()):\n'),
]
KILLS = ["peer.request-members", "peer.reader-pin-null"]
