"""A slot file's mode is not checked on load: a state open to group and others is used (and rewritten 0600)."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '        if owned and (info.st_uid != os.geteuid() or info.st_mode & 0o077):',
    '        if owned and (info.st_uid != os.geteuid()):',
)]
KILLS = ["state.unreadable-kept"]
