"""The child's stdin is fed the rest of the spool in one pread() instead of IO_CHUNK_BYTES blocks, so the whole source is in memory."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '            chunk = os.pread(self.source_fd, min(IO_CHUNK_BYTES, left), self.offset) if left > 0 else b""\n',
    '            chunk = os.pread(self.source_fd, left, self.offset) if left > 0 else b""\n',
)]
KILLS = ["stream.memory-flat"]
