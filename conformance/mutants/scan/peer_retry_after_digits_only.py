"""A 204's Retry-After must be bare digits (the node before issue 20): +1, which the upstream's int() reads, is a protocol error."""
NODE = "nodes/scan_worker.py"
REPLACE = [
    ('            retry_after = header_int(answer.headers.get("Retry-After"))\n',
     '            retry_after = answer.headers.get("Retry-After") or ""\n'
     '            retry_after = int(retry_after) if re.fullmatch(r"[0-9]{1,4}", retry_after) else None\n'),
]
KILLS = ["peer.retry-after-forms"]
