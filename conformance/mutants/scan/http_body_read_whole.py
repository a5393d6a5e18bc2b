"""An answer's body is read whole, then measured: an endless body is held in memory."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        chunk = response.read(min(IO_CHUNK_BYTES, limit + 1 - count))\n',
    '        chunk = response.read()\n',
)]
KILLS = ["http.endless"]
