"""The request's digest is taken over the members the node knows, so a request with added members digests to another value than the broker's."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    request_bytes = canonical_bytes(request)\n',
    '    request = dict((key, value) for key, value in request.items() if key in REQUEST_KEYS)  # what we read\n'
    '    request_bytes = canonical_bytes(request)\n',
)]
KILLS = ["peer.request-members"]
