"""In child mode the raw bytes are counted but never compared with the header's raw_content_sha256, so a corrupt input is normalised as if whole."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    if framed.left or stdin.read(1) or framed.digest.hexdigest() != retrieval["raw_content_sha256"]:\n',
    '    if framed.left or stdin.read(1):\n',
)]
KILLS = ["child.own-mode"]
