"""allowed_callback_paths entries are not checked to lie under /internal/v3/producer/: any string passes."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            isinstance(path, str) and path.startswith(CALLBACK_PREFIX) for path in allowed)):\n',
    '            isinstance(path, str) for path in allowed)):\n',
)]
KILLS = ["lease.callbacks"]
