"""A slot file's mode is not checked on load: a state open to group and others is used (and rewritten 0600)."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            raise WorkerClientError("a state file that is not a regular file")\n'
    '        if info.st_uid != os.geteuid() or info.st_mode & 0o077:',
    '            raise WorkerClientError("a state file that is not a regular file")\n'
    '        if info.st_uid != os.geteuid():',
)]
KILLS = ["state.unreadable-kept"]
