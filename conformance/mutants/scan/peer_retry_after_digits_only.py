"""A 204's Retry-After must be bare digits (the node before issue 20): +1, which the upstream's int() reads, is a protocol error."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('RETRY_AFTER_RE = re.compile(r"\\+?[0-9]{1,16}")',
     'RETRY_AFTER_RE = re.compile(r"[0-9]{1,4}")'),
]
KILLS = ['peer.retry-after-forms']
