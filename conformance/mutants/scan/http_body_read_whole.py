"""An answer's body is read whole, then measured: an endless body is held in memory."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    data = read_at_most(response.read, limit + 1)\n',
    '    data = response.read()\n',
)]
KILLS = ["http.endless"]
