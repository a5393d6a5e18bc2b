"""The download descriptor must have exactly the eight keys: a member nobody defined makes it invalid."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "    if (not is_int(size) or not 1 <= size <= MAX_PROBE_ACQUISITION_BUNDLE_BYTES\n",
    '    if (set(download) != {"url", "bundle_size_bytes", "bundle_sha256", "expires_at", "crawler_session_id",\n'
    '                          "request_digest", "source_id", "source_authority_digest"}\n'
    "            or not is_int(size) or not 1 <= size <= MAX_PROBE_ACQUISITION_BUNDLE_BYTES\n",
)]
KILLS = ["peer.acquisition-members"]
