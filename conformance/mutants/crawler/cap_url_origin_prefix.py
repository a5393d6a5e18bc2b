"""The upload URL must start with the storage origin's exact text (the pre-issue-20 CAP-5), so a scheme in capitals is refused."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if (parts.scheme != origin.scheme or parts.hostname != origin.hostname or port != origin.port\n',
    '    if (not url.startswith(config.storage_origin + "/")\n'
    '            or parts.scheme != origin.scheme or parts.hostname != origin.hostname or port != origin.port\n',
)]
KILLS = ["peer.upload-url-forms"]
