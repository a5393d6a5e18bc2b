"""State documents (slot files, stale records, the cursor) are written in place (open with O_TRUNC, then write) instead of through a new file and os.replace, so a crash in mid-write leaves a torn file."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    data = canonical(value)\n'
    '    if len(data) > limit:\n'
    '        raise WorkerClientError("a document larger than its bound")\n'
    '    atomic_write(path, data, 0o600)',
    '    data = canonical(value)\n'
    '    if len(data) > limit:\n'
    '        raise WorkerClientError("a document larger than its bound")\n'
    '    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)\n'
    '    try:\n'
    '        os.write(fd, data)\n'
    '        os.fsync(fd)\n'
    '    finally:\n'
    '        os.close(fd)',
)]
KILLS = ["crash.churn"]
