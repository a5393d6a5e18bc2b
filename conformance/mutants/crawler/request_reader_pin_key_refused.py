"""Any query.reader_pin is refused, null included, though null is the upstream's own "no Reader" (it tests `is not None`)."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if query.get("reader_pin") is not None:\n',
    '    if "reader_pin" in query:\n',
)]
KILLS = ["peer.reader-pin-null"]
