"""The child's stdin is fed the rest of the spool in one pread() instead of IO_CHUNK_BYTES blocks, so the whole source is in memory."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '                        chunk = os.pread(source_fd, min(IO_CHUNK_BYTES, source_size - offset), offset) if (\n',
    '                        chunk = os.pread(source_fd, source_size - offset, offset) if (\n',
)]
KILLS = ["stream.memory-flat"]
