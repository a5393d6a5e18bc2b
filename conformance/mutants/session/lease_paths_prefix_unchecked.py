"""allowed_callback_paths is checked for the required templates only: any other path, of any length, passes."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            isinstance(path, str) and len(path) <= MAX_CALLBACK_PATH_CHARS and path.startswith(CALLBACK_PREFIX)\n',
    '            isinstance(path, str)\n',
)]
KILLS = ["lease.callbacks"]
