"""The start-up scan asks is_file() (which follows links), so a symlinked slot file is taken for a state and the worker loops on it instead of refusing to start."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            if entry.is_symlink() or not entry.is_file(follow_symlinks=False):',
    '            if not entry.is_file():',
)]
KILLS = ["state.links-refused"]
