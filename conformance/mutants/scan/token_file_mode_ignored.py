"""The token file's permission bits are not checked: a file open to group or others is used."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            raise ValueError("not a regular file")\n'
    '        if info.st_uid != os.geteuid() or info.st_mode & 0o077:\n',
    '            raise ValueError("not a regular file")\n'
    '        if info.st_uid != os.geteuid():\n',
)]
KILLS = ["token.file-private", "token.invalid-rotation"]
