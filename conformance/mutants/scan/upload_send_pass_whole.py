"""The send pass reads the rest of the bundle in one read: the whole file is held in memory while it is sent."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                chunk = os.read(fd, min(UPLOAD_CHUNK_BYTES, left))',
    '                chunk = os.read(fd, left)',
)]
KILLS = ["upload.streamed"]
