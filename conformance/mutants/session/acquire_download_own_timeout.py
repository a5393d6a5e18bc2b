"""The download runs on a clock of its own (CALLBACK_TIMEOUT_S) rather than what is left of the acquisition ceiling (D35)."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            download_bundle(url, size, sha256, path, ceiling)  # SESSION-BACKOFF-3: one GET, never retried\n',
    '            download_bundle(url, size, sha256, path, Deadline(CALLBACK_TIMEOUT_S))\n',
)]
KILLS = ["acquire.ceiling"]
