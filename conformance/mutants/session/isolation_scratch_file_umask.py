"""The downloaded bundle is created with the umask's mode (0644 here), readable by every user of the machine."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)\n',
    '    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)\n',
)]
KILLS = ["isolation.scratch"]
