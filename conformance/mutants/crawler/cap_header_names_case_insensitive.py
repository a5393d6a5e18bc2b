"""required_headers names are compared ignoring case (HTTP header names are case-insensitive), so "content-type" passes CAP-7."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    "    if all(header_pairs != required_headers(sid, request_digest, attestation)\n",
    "    if all([(n.lower(), v) for n, v in header_pairs]\n"
    "           != [(n.lower(), v) for n, v in required_headers(sid, request_digest, attestation)]\n",
)]
KILLS = ["cap.headers"]
