"""In child mode row_digest hashes the header line too (the whole content), so the summary no longer matches the rows it describes."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '    content = bytearray(canonical_bytes(columns) + b"\\n")  # CRAWLER-RESULT-10: the header line\n'
    '    row_hash = hashlib.sha256()\n',
    '    content = bytearray(canonical_bytes(columns) + b"\\n")  # CRAWLER-RESULT-10: the header line\n'
    '    row_hash = hashlib.sha256(content)\n',
)]
KILLS = ["child.own-mode", "report.success"]
